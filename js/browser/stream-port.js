// A ReadableStream handed to the engine worker through a MessagePort, for
// browsers that cannot transfer streams to a worker (WebKit: postMessage
// throws DataCloneError). The page reads the stream and sends one chunk each
// time the worker asks for one; the worker sees a ReadableStream again.
// Page side: canTransferStreams() and streamPort(stream); worker side:
// portStream(port).

let transferable;

// Whether this browser can transfer a ReadableStream (asked once).
export function canTransferStreams() {
  if (transferable === undefined) {
    const { port1, port2 } = new MessageChannel();
    try {
      const stream = new ReadableStream();
      port1.postMessage(stream, [stream]);
      transferable = true;
    } catch {
      transferable = false;
    } finally {
      port1.close();
      port2.close();
    }
  }
  return transferable;
}

// Page side: a port to transfer to the worker, answering each 'pull' with
// {value} (a chunk), {done: true} or {error} (the read's message), and
// cancelling the stream on 'cancel'.
export function streamPort(stream) {
  const { port1, port2 } = new MessageChannel();
  const reader = stream.getReader();
  port1.onmessage = async ({ data }) => {
    if (data === 'cancel') {
      port1.close();
      reader.cancel().catch(() => {});
      return;
    }
    try {
      const { done, value } = await reader.read();
      port1.postMessage(done ? { done: true } : { value });
      if (done) port1.close();
    } catch (error) {
      port1.postMessage({ error: String(error?.message ?? error) });
      port1.close();
    }
  };
  return port2;
}

// Worker side: the stream served by streamPort at the other end of `port`.
export function portStream(port) {
  return new ReadableStream({
    pull(controller) {
      return new Promise((resolve) => {
        port.onmessage = ({ data }) => {
          if (data.error !== undefined) controller.error(new Error(data.error));
          else if (data.done) {
            controller.close();
            port.close();
          } else controller.enqueue(data.value);
          resolve();
        };
        port.postMessage('pull');
      });
    },
    cancel() {
      port.postMessage('cancel');
      port.close();
    },
  });
}
