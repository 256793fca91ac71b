// Caller side: turns what the user passed to LLM.load into a description the
// worker can open (sources.js). Paths and URLs are opened by the worker itself;
// bytes in memory and web streams are handed over as a transferred
// ReadableStream, so the worker writes them into the wasm heap chunk by chunk.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const CHUNK_BYTES = 4 << 20;

// Returns {description, transfer}; throws TypeError for an unusable source.
export function describeSource(source, { size } = {}) {
  if (source instanceof URL) {
    if (source.protocol === 'file:') return { description: { kind: 'path', path: fileURLToPath(source) }, transfer: [] };
    source = source.href;
  }
  if (typeof source === 'string') {
    if (/^https?:\/\//i.test(source)) return { description: { kind: 'url', url: source }, transfer: [] };
    return { description: { kind: 'path', path: path.resolve(source) }, transfer: [] };
  }
  if (source instanceof ArrayBuffer) source = new Uint8Array(source);
  if (ArrayBuffer.isView(source)) {
    const stream = bytesStream(new Uint8Array(source.buffer, source.byteOffset, source.byteLength));
    return { description: { kind: 'stream', stream, size: source.byteLength }, transfer: [stream] };
  }
  if (typeof source?.getReader === 'function') {
    if (size !== undefined && !(Number.isSafeInteger(size) && size >= 0)) {
      throw new TypeError('size must be the stream length in bytes');
    }
    return { description: { kind: 'stream', stream: source, size }, transfer: [source] };
  }
  throw new TypeError('the model source must be a path, an http(s) URL, bytes or a ReadableStream');
}

// A stream of copies of 4 MiB slices: a transferred chunk is cloned whole,
// so a view into the big buffer would copy all of it.
function bytesStream(bytes) {
  let position = 0;
  return new ReadableStream({
    pull(controller) {
      if (position >= bytes.length) {
        controller.close();
        return;
      }
      controller.enqueue(bytes.slice(position, position + CHUNK_BYTES));
      position += CHUNK_BYTES;
    },
  });
}
