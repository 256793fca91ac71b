// Worker side: the bytes of a model file, read in order into caller-given
// buffers (usually views of the wasm heap, so nothing is held twice).
//
// A reader is { size, read(dst) → Promise<bytes read, 0 at the end>, close() };
// `size` is undefined when the length is not known in advance (a stream).
import fs from 'node:fs';
import { LoadError } from './errors.js';

// Opens the reader for a source description posted by the caller:
// {kind: 'path', path} | {kind: 'stream', stream, size} | {kind: 'url', url, headers}.
export async function openReader(source, signal) {
  switch (source.kind) {
    case 'path':
      return openFileReader(source.path);
    case 'stream':
      return streamReader(source.stream, source.size);
    case 'url':
      return openUrlReader(source.url, source.headers ?? {}, signal);
    default:
      throw new LoadError(`unknown source kind '${source.kind}'`);
  }
}

async function openFileReader(path) {
  let handle;
  try {
    handle = await fs.promises.open(path, 'r');
    const { size } = await handle.stat();
    let position = 0;
    return {
      size,
      async read(dst) {
        const { bytesRead } = await handle.read(dst, 0, dst.length, position);
        position += bytesRead;
        return bytesRead;
      },
      close: () => handle.close(),
    };
  } catch (error) {
    await handle?.close();
    throw new LoadError(`cannot read '${path}': ${error.message}`, { cause: error });
  }
}

// Copies the chunks of a web ReadableStream of bytes out as asked.
function streamReader(stream, size) {
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

// An http(s) URL. If the body breaks off before the end, the rest is asked
// for with a Range request from where it stopped (a few times at most).
async function openUrlReader(url, headers, signal) {
  const maxResumes = 5;
  let response = await request(url, headers, signal, 0);
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
            throw new LoadError(`download of ${url} failed at byte ${position}: ${error.message}`, { cause: error });
          }
          resumes += 1;
          body.close();
          response = await request(url, headers, signal, position);
          if (response.status !== 206) {
            throw new LoadError(`${url}: the server ignored the Range request to resume at byte ${position}`, {
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

async function request(url, headers, signal, from) {
  let response;
  try {
    response = await fetch(url, { headers: from > 0 ? { ...headers, Range: `bytes=${from}-` } : headers, signal });
  } catch (error) {
    if (signal.aborted) throw error;
    throw new LoadError(`cannot fetch ${url}: ${error.cause?.message ?? error.message}`, { cause: error });
  }
  if (!response.ok) {
    response.body?.cancel().catch(() => {});
    throw new LoadError(`cannot fetch ${url}: HTTP ${response.status} ${response.statusText}`.trim(), {
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
