// The typed errors of the public API, their codes, and how an error crosses
// the worker boundary: the worker posts a plain description ({kind, code,
// message, ...}) and the caller's side rebuilds the typed error from it.

// Every code an error of the API carries, and what it means. The engine's
// own codes are named in cpp/core/error_codes.def and reach JS by name;
// tests/js/errors.test.mjs checks that each of them is here and that
// this list is index.d.ts's ErrorCode.
export const ERROR_CODES = Object.freeze([
  'invalid_argument',  // an argument or option is invalid (TypeError/RangeError in JS, or the engine's check)
  'not_found',         // HTTP 404, a file that does not exist, a name that is no model
  'http_error',        // any other HTTP error status (the error's `status`)
  'network',           // the request failed, or the download broke off and could not be resumed
  'io',                // a local file or a stream given as the source could not be read
  'bad_file',          // not a GGUF file, or truncated, or inconsistent
  'unsupported',       // a valid file whose architecture, tensor type or version the engine lacks, or a request parameter it has no equivalent for
  'sha256_mismatch',   // the bytes are not the file the expected sha256 names
  'out_of_memory',     // the model and its context do not fit the memory (4 GB wasm, or memoryLimit)
  'context_full',      // the prompt does not fit the context
  'bad_state',         // a saved state is damaged, truncated, of another model or format, or too long for the context
  'aborted',           // the AbortSignal fired, or the consumer of a stream left its loop
  'disposed',          // the model was disposed before or while the call ran
  'worker_failed',     // the engine worker could not start, or it died, or the engine crashed (a wasm trap)
  'internal',          // a bug: a failure nothing above describes
]);

// Base class of the API's errors: `code` (one of ERROR_CODES) says what went
// wrong, for code to branch on; `message` says it for people; `cause` holds
// the underlying error, when there is one.
export class LLMError extends Error {
  constructor(message, { code = 'internal', cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'LLMError';
    this.code = code;
  }
}

// Loading failed: an HTTP error, a bad or truncated file, out of memory...
// `status` is the HTTP status, if there was one.
export class LoadError extends LLMError {
  constructor(message, { code, cause, status } = {}) {
    super(message, { code, cause });
    this.name = 'LoadError';
    if (status !== undefined) this.status = status;
  }
}

// The caller aborted the request (through an AbortSignal or by leaving a
// stream's loop). Named like fetch's, so `error.name === 'AbortError'` checks
// work for both; `cause` is the signal's reason.
export class AbortError extends LLMError {
  constructor(message = 'the operation was aborted', { cause } = {}) {
    super(message, { code: 'aborted', cause });
    this.name = 'AbortError';
  }
}

// Generation (or another request on a loaded model) failed.
export class GenerationError extends LLMError {
  constructor(message, { code, cause } = {}) {
    super(message, { code, cause });
    this.name = 'GenerationError';
  }
}

// A failed status of the engine, {code: name, message}: the cause a
// LoadError or GenerationError carries.
export class EngineError extends LLMError {
  constructor({ code, message }) {
    // need_more_data is between the loader and the parser; reaching a caller, it is a bug.
    super(message, { code: ERROR_CODES.includes(code) ? code : 'internal' });
    this.name = 'EngineError';
  }
}

// Throws the EngineError for a failed {code, message} status of the bindings.
export function checkStatus(status) {
  if (status.code !== 'ok') throw new EngineError(status);
  return status;
}

// `error` (a TypeError or RangeError of an argument check) with the code
// 'invalid_argument', so one test of `code` covers these and the engine's.
export function asInvalidArgument(error) {
  if ((error instanceof TypeError || error instanceof RangeError) && error.code === undefined) {
    error.code = 'invalid_argument';
  }
  return error;
}

// The value of check(), which checks a call's arguments; a TypeError or
// RangeError it throws gets the code 'invalid_argument'.
export function checkArguments(check) {
  try {
    return check();
  } catch (error) {
    throw asInvalidArgument(error);
  }
}

// Worker side: a plain, structured-cloneable description of `error`, thrown
// by a request of `kind` ('load' or 'generation'). Errors that are not the
// API's are bugs: code 'internal', the error itself as the cause.
export function describeError(error, kind) {
  if (error instanceof AbortError || error?.name === 'AbortError') return { kind: 'abort', message: error.message };
  const ours = error instanceof LLMError;
  const description = {
    kind: error instanceof LoadError ? 'load' : kind,
    code: ours ? error.code : 'internal',
    message: String(error?.message ?? error),
  };
  if (error?.status !== undefined) description.status = error.status;
  const cause = ours ? error.cause : error;
  if (cause instanceof Error) {
    description.cause = { name: cause.name, message: cause.message };
    if (typeof cause.code === 'string') description.cause.code = cause.code;
  }
  return description;
}

// Caller side: the typed error described by `d`.
export function errorFromDescription(d) {
  if (d.kind === 'abort') return new AbortError(d.message);
  let cause;
  if (d.cause) {
    cause = new Error(d.cause.message);
    cause.name = d.cause.name;
    if (d.cause.code !== undefined) cause.code = d.cause.code;
  }
  if (d.kind === 'load') return new LoadError(d.message, { code: d.code, cause, status: d.status });
  return new GenerationError(d.message, { code: d.code, cause });
}

// The code of an HTTP error status.
export function httpErrorCode(status) {
  return status === 404 || status === 410 ? 'not_found' : 'http_error';
}
