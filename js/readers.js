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

// The download of a URL must start over from byte 0: the file changed on the
// server between two requests, or the server answered a resume with the whole
// file. What was read so far belongs to another answer, so the load that read
// it starts over (worker/engine-host.js, js/node/download.js).
export class DownloadRestartError extends LoadError {}

// An http(s) URL. If the body breaks off before the end, the rest is asked
// for with a Range request from where it stopped, for as long as the answers
// bring bytes (up to maxRetries tries in a row without any).
// A resume must continue the same file: it carries If-Range with the first
// answer's validator, and the answer's ETag, Last-Modified, Content-Range and
// Content-Length are checked. A mix of two versions is never returned: a
// changed file throws DownloadRestartError, an answer for other bytes LoadError.
export async function openUrlReader(url, signal, { maxRetries = 5 } = {}) {
  const first = await send(url, signal, {});
  if (!first.ok) throw httpError(url, first);
  const size = contentLength(first);
  let version = versionOf(first);
  let body = streamReader(first.body, size);
  let position = 0;
  let retries = 0;  // tries in a row that brought no byte

  // A reader of the rest of the file from `position` on, after `failure`.
  async function reopen(failure) {
    for (;;) {
      if (size === undefined || retries >= maxRetries) {
        const where = size === undefined ? `byte ${position}` : `byte ${position} of ${size}, after ${retries} retries`;
        throw new LoadError(`download of ${url} failed at ${where}: ${failure.message}`, {
          code: failure.code ?? 'network', cause: failure, status: failure.status,
        });
      }
      retries += 1;
      let response;
      try {
        response = await send(url, signal, position > 0 ? resumeHeaders(url, position, version) : {});
      } catch (error) {
        if (signal.aborted) throw error;
        failure = error;
        continue;
      }
      if (response.status === 416) throw shortBody(url, response, position, size);
      if (!response.ok) {
        failure = httpError(url, response);
        continue;
      }
      if (position === 0) {
        // Nothing was read yet: any answer of the announced size will do.
        if (contentLength(response) !== size) throw mustRestart(url, response, 'its size changed');
        version = versionOf(response);
        return streamReader(response.body, size);
      }
      return restOfFile(url, response, position, size, version);
    }
  }

  return {
    size,
    async read(dst) {
      for (;;) {
        let failure;
        try {
          const n = await body.read(dst);
          if (n > 0 || size === undefined || position >= size) {
            if (n > 0) retries = 0;
            position += n;
            return n;
          }
          failure = new Error(`the body ended at byte ${position} of the ${size} bytes its Content-Length announced`);
        } catch (error) {
          if (signal.aborted) throw error;
          failure = new Error(`the connection broke off (${error.message})`, { cause: error });
        }
        body.close();
        body = await reopen(failure);
      }
    },
    close: () => body.close(),
  };
}

// The reader of a resume's answer, which must be the bytes from `position`
// to the end of the same version of the file.
function restOfFile(url, response, position, size, version) {
  const change = versionChange(version, response);
  if (change) throw mustRestart(url, response, `it changed on the server during the download (${change})`);
  const request = `the request to resume at byte ${position}`;
  if (response.status !== 206) throw mustRestart(url, response, `the server answered ${request} with the whole file`);
  const range = response.headers.get('content-range');
  const length = contentLength(response);
  let wrong = null;
  if (range !== null && !contentRangeIs(range, position, size)) wrong = `Content-Range '${range}'`;
  else if (length !== undefined && length !== size - position) wrong = `Content-Length ${length}`;
  else if (range === null && length === undefined) wrong = 'neither Content-Range nor Content-Length';
  if (wrong) {
    response.body?.cancel().catch(() => {});
    throw new LoadError(`${url}: the answer to ${request} has ${wrong}, not 'bytes ${position}-${size - 1}/${size}'`, {
      code: 'network',
    });
  }
  return streamReader(response.body, size - position);
}

function contentRangeIs(header, position, size) {
  const match = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(header.trim());
  return match !== null && Number(match[1]) === position && Number(match[2]) === size - 1 &&
    (match[3] === '*' || Number(match[3]) === size);
}

// A 416 to a resume: the server has no bytes from `position` on, so the body
// was shorter than the first answer's Content-Length said.
function shortBody(url, response, position, size) {
  const range = response.headers.get('content-range');
  return new LoadError(
    `${url}: the body ended at byte ${position} of the ${size} bytes its Content-Length announced, and the ` +
      `server has nothing past it (HTTP 416${range ? `, Content-Range '${range}'` : ''})`,
    { code: 'network', status: 416 },
  );
}

function mustRestart(url, response, why) {
  response.body?.cancel().catch(() => {});
  return new DownloadRestartError(`${url}: ${why}`, { code: 'network' });
}

// The validators that tell versions of a file apart.
function versionOf(response) {
  return { etag: response.headers.get('etag'), lastModified: response.headers.get('last-modified') };
}

// How `response` shows another version than `version`, or null. ETags are
// compared weakly (W/ ignored): a changed weak ETag is still a change.
function versionChange(version, response) {
  const now = versionOf(response);
  const bare = (etag) => etag.replace(/^W\//, '');
  if (version.etag && now.etag && bare(version.etag) !== bare(now.etag)) return `ETag ${version.etag} → ${now.etag}`;
  if (version.lastModified && now.lastModified && version.lastModified !== now.lastModified) {
    return `Last-Modified ${version.lastModified} → ${now.lastModified}`;
  }
  return null;
}

// Range from `position` on, with If-Range: the strong ETag, else the date
// (a weak ETag may not be used there). Browsers send If-Range only to their
// own origin: elsewhere it is not a CORS-safelisted header and would need a
// preflight the host may refuse; the answer's validators are compared anyway.
function resumeHeaders(url, position, version) {
  const headers = { Range: `bytes=${position}-` };
  const ifRange = version.etag && !version.etag.startsWith('W/') ? version.etag : version.lastModified;
  const origin = globalThis.location?.origin;
  if (ifRange && (origin === undefined || new URL(url).origin === origin)) headers['If-Range'] = ifRange;
  return headers;
}

async function send(url, signal, headers) {
  try {
    return await fetch(url, { headers, signal });
  } catch (error) {
    if (signal.aborted) throw error;
    throw new LoadError(`cannot fetch ${url}: ${error.cause?.message ?? error.message}`, {
      code: 'network',
      cause: error,
    });
  }
}

function httpError(url, response) {
  response.body?.cancel().catch(() => {});
  return new LoadError(`cannot fetch ${url}: HTTP ${response.status} ${response.statusText}`.trim(), {
    code: httpErrorCode(response.status),
    status: response.status,
  });
}

// The body's length from Content-Length (undefined if absent or compressed).
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
