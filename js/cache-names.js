// Names of cached downloads, shared by the caller (LLM.cache) and the worker
// (which writes the cache while downloading): one file per URL, named after
// the URL's last path segment plus a hash of the whole URL, and a metadata
// file beside it.

// 'stories260K--1a2b3c4d.gguf' for 'https://host/x/stories260K.gguf'.
export function cacheFileName(url) {
  const last = new URL(url).pathname.split('/').filter(Boolean).pop() ?? 'model';
  const base = decodeURIComponent(last).replace(/\.gguf$/i, '').replace(/[^\w.-]+/g, '_').slice(0, 80) || 'model';
  return `${base}--${fnv1a(url)}.gguf`;
}

// The metadata file of a cached model: {url, size, sha256, checksum, savedAt}.
// sha256 and checksum (Checksum64, cpp/core/checksum.h) are of the bytes as
// they were written; the checksum is checked on every read of the entry.
export function metaFileName(fileName) {
  return `${fileName}.json`;
}

// Files still being written end with this; they are never read as models.
export const PARTIAL_SUFFIX = '.part';

// 32-bit FNV-1a of a string's UTF-16 code units, as 8 hex digits.
function fnv1a(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}
