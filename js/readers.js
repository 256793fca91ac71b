// The bytes of a model file, read in order into caller-given
// buffers (usually views of the wasm heap, so nothing is held twice).
//
// A reader is { size, read(dst) → Promise<bytes read, 0 at the end>, close() };
// `size` is undefined when the length is not known in advance.
// Everything here works in Node and in browsers; platform readers (files,
// OPFS) have the same shape.
import { LoadError, httpErrorCode } from './errors.js';

const COPY_BUFFER_BYTES = 4 << 20;

// A web ReadableStream of bytes. Byte streams are read with a BYOB reader
// into one reused buffer (several times faster than the default reader in
// Chromium); the heap itself cannot be a BYOB target, as reading detaches it.
export function streamReader(stream, size) {
  let byob = null;
  try {
    byob = stream.getReader({ mode: 'byob' });
  } catch {
    // not a byte stream
  }
  if (byob) return byobReader(byob, size);
  const reader = stream.getReader();
  let chunk = null;  // the unread rest of the current chunk
  return {
    size,
    async read(dst) {
      while (!chunk || chunk.length === 0) {
        const { done, value } = await reader.read();
        if (done) return 0;
        chunk = value instanceof Uint8Array ? value : new Uint8Array(value);
      }
      const n = Math.min(dst.length, chunk.length);
      dst.set(chunk.subarray(0, n));
      chunk = chunk.subarray(n);
      return n;
    },
    close: () => reader.cancel().catch(() => {}),
  };
}

function byobReader(reader, size) {
  let buffer = new ArrayBuffer(COPY_BUFFER_BYTES);
  return {
    size,
    async read(dst) {
      if (dst.length === 0) return 0;
      const want = Math.min(dst.length, buffer.byteLength);
      const { done, value } = await reader.read(new Uint8Array(buffer, 0, want));
      if (done || !value) return 0;
      buffer = value.buffer;  // the read transferred our buffer; take it back
      dst.set(value);
      return value.length;
    },
    close: () => reader.cancel().catch(() => {}),
  };
}

// A Blob or File, read slice by slice.
export function blobReader(blob) {
  let position = 0;
  return {
    size: blob.size,
    async read(dst) {
      const n = Math.min(dst.length, COPY_BUFFER_BYTES, blob.size - position);
      if (n <= 0) return 0;
      const bytes = new Uint8Array(await blob.slice(position, position + n).arrayBuffer());
      dst.set(bytes);
      position += bytes.length;
      return bytes.length;
    },
    close: async () => {},
  };
}

// An http(s) URL. If the body breaks off before the end, the rest is asked
// for with a Range request from where it stopped (a few times at most).
export async function openUrlReader(url, signal, { maxResumes = 5 } = {}) {
  let response = await request(url, signal, 0);
  const size = contentLength(response);
  let body = streamReader(response.body, size);
  let position = 0;
  let resumes = 0;
  return {
    size,
    async read(dst) {
      for (;;) {
        try {
          const n = await body.read(dst);
          if (n > 0 || size === undefined || position >= size) {
            position += n;
            return n;
          }
          throw new Error(`the body ended at byte ${position} of ${size}`);
        } catch (error) {
          if (signal.aborted) throw error;
          if (size === undefined || resumes >= maxResumes) {
            throw new LoadError(`download of ${url} failed at byte ${position}: ${error.message}`, {
              code: 'network',
              cause: error,
            });
          }
          resumes += 1;
          body.close();
          response = await request(url, signal, position);
          if (response.status !== 206) {
            response.body?.cancel().catch(() => {});
            throw new LoadError(`${url}: the server ignored the Range request to resume at byte ${position}`, {
              code: 'network',
              status: response.status,
            });
          }
          body = streamReader(response.body, size - position);
        }
      }
    },
    close: () => body.close(),
  };
}

async function request(url, signal, from) {
  let response;
  try {
    response = await fetch(url, { headers: from > 0 ? { Range: `bytes=${from}-` } : {}, signal });
  } catch (error) {
    if (signal.aborted) throw error;
    throw new LoadError(`cannot fetch ${url}: ${error.cause?.message ?? error.message}`, {
      code: 'network',
      cause: error,
    });
  }
  if (!response.ok) {
    response.body?.cancel().catch(() => {});
    throw new LoadError(`cannot fetch ${url}: HTTP ${response.status} ${response.statusText}`.trim(), {
      code: httpErrorCode(response.status),
      status: response.status,
    });
  }
  return response;
}

// The full file size from a 200's Content-Length (undefined if absent or compressed).
function contentLength(response) {
  if (response.headers.get('content-encoding')) return undefined;
  const length = response.headers.get('content-length');
  return length === null ? undefined : Number(length);
}

// `reader`, with every byte it reads also passed to sink(bytes) (which may
// return a promise) before the read resolves: hashing, writing a cache file.
export function tapReader(reader, sink) {
  return {
    size: reader.size,
    async read(dst) {
      const n = await reader.read(dst);
      if (n > 0) await sink(dst.subarray(0, n));
      return n;
    },
    close: () => reader.close(),
  };
}
