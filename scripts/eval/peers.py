#!/usr/bin/env python3
"""BM25 peers of `npm run eval:search -- --collection NAME`: Xapian (BM25Weight, English stemmer)
and SQLite FTS5 (bm25(), porter tokenizer), each over title + text of a judged collection, each
question's words joined by OR. Prints one JSON object: {"xapian": {qid: [docid, ...]}, "fts5": ...},
the first 100 documents of each question, best first.

Usage: peers.py COLLECTION_DIR   (docs.jsonl and queries.jsonl; Xapian from Debian's python3-xapian)
"""
import json
import re
import sqlite3
import sys
import tempfile

import xapian

DEPTH = 100


def words(text):
    return re.findall(r"[A-Za-z0-9]+", text)


def xapian_run(docs, queries):
    db = xapian.WritableDatabase(tempfile.mkdtemp(), xapian.DB_CREATE_OR_OVERWRITE)
    generator = xapian.TermGenerator()
    stemmer = xapian.Stem("en")
    generator.set_stemmer(stemmer)
    for d in docs:
        doc = xapian.Document()
        generator.set_document(doc)
        generator.index_text(d["title"])
        generator.increase_termpos()
        generator.index_text(d["text"])
        doc.set_data(d["id"])
        db.add_document(doc)
    db.commit()
    parser = xapian.QueryParser()
    parser.set_stemmer(stemmer)
    parser.set_stemming_strategy(xapian.QueryParser.STEM_SOME)
    parser.set_database(db)
    enquire = xapian.Enquire(db)
    weight = xapian.BM25Weight()  # kept referenced: the binding does not keep it alive
    enquire.set_weighting_scheme(weight)
    run = {}
    for q in queries:
        ws = words(q["text"])
        if not ws:
            continue
        # Each word parsed alone (stemmed as the parser stems it), all joined by OR: no word is read as an operator.
        enquire.set_query(xapian.Query(xapian.Query.OP_OR, [parser.parse_query(w, 0) for w in ws]))
        run[q["id"]] = [m.document.get_data().decode() for m in enquire.get_mset(0, DEPTH)]
    return run


def fts5_run(docs, queries):
    con = sqlite3.connect(":memory:")
    con.execute("create virtual table d using fts5(id unindexed, title, text, tokenize='porter')")
    con.executemany("insert into d values (?, ?, ?)", [(d["id"], d["title"], d["text"]) for d in docs])
    run = {}
    for q in queries:
        ws = words(q["text"])
        if not ws:
            continue
        match = " OR ".join('"%s"' % w for w in ws)
        run[q["id"]] = [r[0] for r in con.execute("select id from d where d match ? order by bm25(d) limit ?", (match, DEPTH))]
    return run


def main():
    directory = sys.argv[1]
    docs = [json.loads(line) for line in open(f"{directory}/docs.jsonl", encoding="utf-8")]
    queries = [json.loads(line) for line in open(f"{directory}/queries.jsonl", encoding="utf-8")]
    json.dump({"xapian": xapian_run(docs, queries), "fts5": fts5_run(docs, queries)}, sys.stdout)


if __name__ == "__main__":
    main()
