/**
 * Exact dot products of one query against many vectors, with WebAssembly SIMD (f32x4): about 4×
 * faster than a scalar JavaScript loop (10k × 512 dimensions: ~2.5 ms instead of ~11 ms here).
 * The module is dots.wat, compiled with wabt (`wat2wasm --enable-simd dots.wat`) and inlined, so
 * nothing is read from disk or compiled at run time beyond this module itself.
 */
const WASM =
  'AGFzbQEAAAABCQFgBX9/f39/AAMCAQAFAwEAAQcRAgZtZW1vcnkCAARkb3RzAAAK2AEB1QEDA38CewF/IANBAnQhCiABIQcCQANAIAUgAk8NAf0MAAAAAAAA' +
  'AAAAAAAAAAAAACEI/QwAAAAAAAAAAAAAAAAAAAAAIQlBACEGAkADQCAGIApPDQEgCCAHIAZq/QAEACAAIAZq/QAEAP3mAf3kASEIIAkgByAGav0ABBAgACAG' +
  'av0ABBD95gH95AEhCSAGQSBqIQYMAAsLIAggCf3kASEIIAQgBUECdGogCP0fACAI/R8BkiAI/R8CIAj9HwOSkjgCACAHIApqIQcgBUEBaiEFDAALCws=';

/** Compiled once, instantiated per matrix (each with its own memory). Node has had SIMD since 16.4. */
let compiled: WebAssembly.Module | null = null;
const module = () => (compiled ??= new WebAssembly.Module(Buffer.from(WASM, 'base64')));

const PAGE = 65_536;

/** Row-major vectors (each zero-padded to a multiple of 8 floats) scored against a query. */
export class DotMatrix {
  readonly rows: number;
  private readonly stride: number;
  private readonly data: Float32Array;
  private readonly query: Float32Array;
  private readonly out: Float32Array;
  private readonly dots: (q: number, data: number, rows: number, dim: number, out: number) => void;
  private readonly at: { query: number; out: number; data: number };

  constructor(
    vectors: Float32Array[],
    readonly dim: number,
  ) {
    this.rows = vectors.length;
    this.stride = Math.ceil(dim / 8) * 8;
    const instance = new WebAssembly.Instance(module());
    const memory = instance.exports.memory as WebAssembly.Memory;
    // Layout: the query, then the scores, then the rows (16-byte aligned).
    this.at = { query: 0, out: this.stride * 4, data: this.stride * 4 + Math.ceil(this.rows / 4) * 16 };
    const bytes = this.at.data + this.rows * this.stride * 4;
    if (bytes > memory.buffer.byteLength) memory.grow(Math.ceil((bytes - memory.buffer.byteLength) / PAGE));
    this.query = new Float32Array(memory.buffer, this.at.query, this.stride);
    this.out = new Float32Array(memory.buffer, this.at.out, this.rows);
    this.data = new Float32Array(memory.buffer, this.at.data, this.rows * this.stride);
    this.dots = instance.exports.dots as DotMatrix['dots'];
    vectors.forEach((v, i) => this.data.set(v.subarray(0, dim), i * this.stride));
  }

  /** Row `i` (a view of its `dim` floats, valid while this matrix lives). */
  row(i: number): Float32Array {
    return this.data.subarray(i * this.stride, i * this.stride + this.dim);
  }

  /** Scores of every row against `q` (a view, valid until the next call). */
  score(q: ArrayLike<number>): Float32Array {
    this.query.fill(0);
    for (let i = 0; i < this.dim; i++) this.query[i] = q[i];
    this.dots(this.at.query, this.at.data, this.rows, this.stride, this.at.out);
    return this.out;
  }
}
