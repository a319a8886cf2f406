// A line diff by longest common subsequence, and its side-by-side rows. No DOM: the test suite runs
// these functions in Node as well.

/** Above this many cells (lines of one side × lines of the other, after the common ends are set aside), the middle is shown as replaced. */
export const MAX_CELLS = 4_000_000;

/** The lines of a text (no line for an empty text; `\r\n` and `\r` end lines too; a final newline adds no empty line). */
export function splitLines(text) {
  if (!text) return [];
  const lines = String(text).replace(/\r\n?/g, '\n').split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

/**
 * The edit script from `a` to `b` (arrays of lines): `{ type: 'same' | 'del' | 'add', text, a, b }`
 * in order, where `a` / `b` are 1-based line numbers on each side (null on the side a line is not on).
 * Common leading and trailing lines are matched first; the middle by LCS (dynamic programming),
 * deletions before additions where both are possible.
 */
export function lineDiff(a, b) {
  const ops = [];
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  for (let i = 0; i < start; i++) ops.push({ type: 'same', text: a[i], a: i + 1, b: i + 1 });

  const n = endA - start;
  const m = endB - start;
  if (n > 0 && m > 0 && n * m <= MAX_CELLS) {
    // lcs[i * (m + 1) + j]: length of the LCS of a[start + i …] and b[start + j …].
    const width = m + 1;
    const lcs = new Uint32Array((n + 1) * width);
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        lcs[i * width + j] =
          a[start + i] === b[start + j] ? lcs[(i + 1) * width + j + 1] + 1 : Math.max(lcs[(i + 1) * width + j], lcs[i * width + j + 1]);
      }
    }
    let i = 0;
    let j = 0;
    while (i < n && j < m) {
      if (a[start + i] === b[start + j]) {
        ops.push({ type: 'same', text: a[start + i], a: start + i + 1, b: start + j + 1 });
        i++;
        j++;
      } else if (lcs[(i + 1) * width + j] >= lcs[i * width + j + 1]) {
        ops.push({ type: 'del', text: a[start + i], a: start + i + 1, b: null });
        i++;
      } else {
        ops.push({ type: 'add', text: b[start + j], a: null, b: start + j + 1 });
        j++;
      }
    }
    for (; i < n; i++) ops.push({ type: 'del', text: a[start + i], a: start + i + 1, b: null });
    for (; j < m; j++) ops.push({ type: 'add', text: b[start + j], a: null, b: start + j + 1 });
  } else {
    for (let i = start; i < endA; i++) ops.push({ type: 'del', text: a[i], a: i + 1, b: null });
    for (let j = start; j < endB; j++) ops.push({ type: 'add', text: b[j], a: null, b: j + 1 });
  }

  for (let k = 0; k < a.length - endA; k++) ops.push({ type: 'same', text: a[endA + k], a: endA + k + 1, b: endB + k + 1 });
  return ops;
}

/** Lines added and removed. */
export function diffStats(ops) {
  let additions = 0;
  let deletions = 0;
  for (const op of ops) {
    if (op.type === 'add') additions++;
    else if (op.type === 'del') deletions++;
  }
  return { additions, deletions };
}

/**
 * Side-by-side rows of an edit script: `{ kind: 'same' | 'change', left, right }` where each side is
 * `{ no, text, type }` or null. A run of deletions and the run of additions after it share rows
 * (removed line beside the line that replaced it); unchanged runs longer than 2 × `context` + 1 lines
 * fold into one `{ kind: 'fold', rows }` row keeping `context` lines on each side of every change.
 */
export function sideBySide(ops, { context = 3 } = {}) {
  const rows = [];
  let dels = [];
  let adds = [];
  const flush = () => {
    for (let k = 0; k < Math.max(dels.length, adds.length); k++) {
      const d = dels[k];
      const ad = adds[k];
      rows.push({
        kind: 'change',
        left: d ? { no: d.a, text: d.text, type: 'del' } : null,
        right: ad ? { no: ad.b, text: ad.text, type: 'add' } : null,
      });
    }
    dels = [];
    adds = [];
  };
  for (const op of ops) {
    if (op.type === 'del') {
      if (adds.length) flush();
      dels.push(op);
    } else if (op.type === 'add') adds.push(op);
    else {
      flush();
      rows.push({ kind: 'same', left: { no: op.a, text: op.text, type: 'same' }, right: { no: op.b, text: op.text, type: 'same' } });
    }
  }
  flush();
  return fold(rows, context);
}

function fold(rows, context) {
  const out = [];
  let k = 0;
  while (k < rows.length) {
    if (rows[k].kind !== 'same') {
      out.push(rows[k++]);
      continue;
    }
    let end = k;
    while (end < rows.length && rows[end].kind === 'same') end++;
    const keepBefore = k === 0 ? 0 : context; // lines after the previous change
    const keepAfter = end === rows.length ? 0 : context; // lines before the next change
    if (end - k > keepBefore + keepAfter + 1) {
      out.push(...rows.slice(k, k + keepBefore));
      out.push({ kind: 'fold', rows: rows.slice(k + keepBefore, end - keepAfter) });
      out.push(...rows.slice(end - keepAfter, end));
    } else out.push(...rows.slice(k, end));
    k = end;
  }
  return out;
}
