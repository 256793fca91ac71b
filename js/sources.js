// Caller side: turns what the user passed to LLM.load into a description the
// worker can open (worker/engine-host.js). URLs are fetched by the worker;
// bytes in memory and web streams are handed over as a transferred
// ReadableStream, so the worker writes them into the wasm heap chunk by
// chunk. Platform sources (file paths in Node) are added by the platform.
import { findModel, remoteUrl } from './registry.js';

const CHUNK_BYTES = 4 << 20;

// {description, transfer} for sources every platform understands, or null.
// options: the load options ({size, sha256, cache}); cacheDescription: what
// the platform adds to a URL description for its cache.
export function describeCommonSource(source, options, cacheDescription = {}) {
  if (source instanceof URL && /^https?:$/.test(source.protocol)) source = source.href;
  if (typeof source === 'string') {
    const url = remoteUrl(source);
    if (url) return { description: { kind: 'url', url, cache: options.cache, ...cacheDescription }, transfer: [] };
    return null;
  }
  if (source instanceof ArrayBuffer) source = new Uint8Array(source);
  if (ArrayBuffer.isView(source)) {
    const stream = bytesStream(new Uint8Array(source.buffer, source.byteOffset, source.byteLength));
    return { description: { kind: 'stream', stream, size: source.byteLength }, transfer: [stream] };
  }
  if (typeof Blob !== 'undefined' && source instanceof Blob) {
    return { description: { kind: 'blob', blob: source }, transfer: [] };
  }
  if (typeof source?.getReader === 'function') {
    const { size } = options;
    if (size !== undefined && !(Number.isSafeInteger(size) && size >= 0)) {
      throw new TypeError('size must be the stream length in bytes');
    }
    return { description: { kind: 'stream', stream: source, size }, transfer: [source] };
  }
  return null;
}

// A registry name's download: {url, sha256}, or null if `name` is not one.
export function registryDownload(name) {
  const entry = typeof name === 'string' ? findModel(name) : undefined;
  return entry ? { url: entry.url, sha256: entry.sha256, file: entry.file } : null;
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
