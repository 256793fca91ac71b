// The engine worker (worker/browser-worker.js) with OPFS as WebKit has it in a
// normal window: every createSyncAccessHandle call rejects with
// NotSupportedError, so the download cache writes through writable streams
// and reads Files. The loading tests start it in place of the real one
// (loading.test.mjs); the method is replaced before any message arrives.
import '../../worker/browser-worker.js';

FileSystemFileHandle.prototype.createSyncAccessHandle = async function createSyncAccessHandle() {
  throw new DOMException('sync access handles are not supported here (a test of the WebKit path)', 'NotSupportedError');
};
