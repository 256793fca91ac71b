// A model server that misbehaves on purpose, for the network-fault suite:
// each request is answered as plan(request) says, so a test can drop the
// connection, lie about lengths, change the file between requests, ignore or
// mangle Range, or answer slowly.
import http from 'node:http';

// request: {index, range (the N of 'bytes=N-', or null), ifRange (header or null)}.
// plan(request) → {
//   file: the bytes served (required),
//   etag, lastModified: validators sent with it (none by default),
//   ignoreRange: answer a Range request with the whole file (200),
//   ignoreIfRange: answer a Range request with 206 even when If-Range names another version,
//   contentRange: the Content-Range header of a 206 instead of the true one (null: none),
//   bodyFrom: where a 206's body starts in `file` (default: the asked-for byte),
//   contentLength: the Content-Length header instead of the true one,
//   dropAfter: body bytes sent before the connection is cut (0: right after the headers),
//   trickle: {bytes, ms}: the body sent `bytes` at a time, one piece per `ms`,
//   delay: ms to wait before answering,
//   status: answer with this status and no body,
//   destroy: cut the connection before any answer,
// }
// Resolves to {url, requests: [request...], close()}.
export async function serveFaults(plan) {
  const requests = [];
  const sockets = new Set();
  const server = http.createServer((req, res) => {
    const match = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const request = { index: requests.length, range: match ? Number(match[1]) : null, ifRange: req.headers['if-range'] ?? null };
    requests.push(request);
    const spec = plan(request);
    if (spec.delay) setTimeout(() => respond(res, request, spec), spec.delay).unref();
    else respond(res, request, spec);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/model.gguf`,
    requests,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(resolve);
      }),
  };
}

function respond(res, request, spec) {
  const { file } = spec;
  if (res.destroyed) return;
  if (spec.destroy) {
    res.socket.destroy();
    return;
  }
  if (spec.status) {
    res.writeHead(spec.status, { 'Content-Length': 0 }).end();
    return;
  }
  const validators = {};
  if (spec.etag) validators.ETag = spec.etag;
  if (spec.lastModified) validators['Last-Modified'] = spec.lastModified;
  const sameVersion = request.ifRange === null || request.ifRange === spec.etag || request.ifRange === spec.lastModified;
  const partial = request.range !== null && !spec.ignoreRange && (sameVersion || spec.ignoreIfRange);
  if (partial && request.range >= file.length) {
    res.writeHead(416, { 'Content-Range': `bytes */${file.length}`, 'Content-Length': 0 }).end();
    return;
  }
  const start = partial ? request.range : 0;
  const body = file.subarray(partial ? spec.bodyFrom ?? start : 0);
  const headers = { 'Accept-Ranges': 'bytes', 'Content-Length': spec.contentLength ?? body.length, ...validators };
  if (partial) {
    const contentRange = spec.contentRange === undefined ? `bytes ${start}-${file.length - 1}/${file.length}` : spec.contentRange;
    if (contentRange !== null) headers['Content-Range'] = contentRange;
  }
  res.writeHead(partial ? 206 : 200, headers);
  const sent = body.subarray(0, Math.min(spec.dropAfter ?? Infinity, headers['Content-Length']));
  // The connection is cut after what was sent when that is less than the
  // header announced (a clean end would leave the client waiting).
  const cut = sent.length < headers['Content-Length'];
  const finish = () => (cut ? res.socket?.destroy() : res.end());
  if (!spec.trickle) {
    if (sent.length === 0) res.flushHeaders();
    else res.write(sent);
    setTimeout(finish, 20);
    return;
  }
  let position = 0;
  const timer = setInterval(() => {
    if (res.destroyed || position >= sent.length) {
      clearInterval(timer);
      if (!res.destroyed) finish();
      return;
    }
    res.write(sent.subarray(position, position + spec.trickle.bytes));
    position += spec.trickle.bytes;
  }, spec.trickle.ms);
  res.on('close', () => clearInterval(timer));
}
