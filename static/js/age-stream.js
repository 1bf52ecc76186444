// age v1 files made and opened chunk by chunk, so uploads resume and downloads go on from any chunk.
//
// An age file (C2SP age v1) is a text header (the file key wrapped for an X25519 recipient or a
// passphrase, then a MAC), a 16-byte nonce, and the payload: 64 KiB chunks, each sealed alone with
// ChaCha20-Poly1305 under HKDF-SHA256(file key, nonce, "payload"), its nonce the chunk's number
// (11 bytes, big-endian) and a last-chunk flag. typage (static/vendor/age.js) makes and opens the
// header; the chunks are sealed here with its own primitives, one at a time, so the same chunk
// always gives the same bytes (a resumed upload sends what the first try would have) and any chunk
// opens without the ones before it. Interop with the `age` command line is tested both ways.

/** Plaintext bytes in a chunk, and a sealed chunk's size (its Poly1305 tag added). */
export const CHUNK = 65536;
export const SEALED = CHUNK + 16;
const NONCE = 16;
/** A sealed chunk's Poly1305 tag. */
const TAG = 16;
/** The age header is short text; one longer than this is no age file. */
const MAX_HEADER = 65536;

/** The library, loaded only when a file is encrypted or opened (it is 140 KB). */
const library = () => import('../vendor/age.js');

/** How many chunks a payload of `plainSize` bytes has: an empty one has one empty chunk. */
export function chunkCount(plainSize) {
  return Math.max(1, Math.ceil(plainSize / CHUNK));
}

/** Chunk `index`'s nonce: its number in 11 bytes, big-endian, then the last-chunk flag. */
export function chunkNonce(index, last) {
  const nonce = new Uint8Array(12);
  let rest = index;
  for (let byte = 10; byte >= 0; byte -= 1) {
    nonce[byte] = rest % 256;
    rest = Math.floor(rest / 256);
  }
  nonce[11] = last ? 1 : 0;
  return nonce;
}

/**
 * Where the header ends in `bytes` (just after its `--- MAC` line), or -1 if it does not end
 * within them. Throws if they do not begin as an age file.
 */
export function headerLength(bytes) {
  const text = new TextDecoder('latin1').decode(bytes.subarray(0, MAX_HEADER));
  const version = 'age-encryption.org/v1\n';
  if (!(text.length < version.length ? version.startsWith(text) : text.startsWith(version))) {
    throw new Error('this is not an age-encrypted file');
  }
  const mac = text.indexOf('\n--- ');
  if (mac < 0) return -1;
  const end = text.indexOf('\n', mac + 1);
  return end < 0 ? -1 : end + 1;
}

/** A decrypter holding the key the link carries (an `AGE-SECRET-KEY-1…` identity) or a passphrase. */
function decrypterFor(lib, { identity, passphrase }) {
  const decrypter = new lib.Decrypter();
  if (passphrase) decrypter.addPassphrase(passphrase);
  else decrypter.addIdentity(identity);
  return decrypter;
}

async function payloadKey(lib, fileKey, nonce) {
  return lib.hkdf(lib.sha256, fileKey, nonce, new TextEncoder().encode('payload'), 32);
}

/**
 * An encrypted file's link fragment, as `blobdrop upload --encrypt` writes it too: the identity as
 * `age-keygen` prints it, then `name=` and `type=`, percent-encoded, joined by `&`. The fragment
 * never leaves the browser.
 */
export function linkFragment(identity, name, type) {
  const parts = [identity, `name=${encodeURIComponent(name)}`];
  if (type) parts.push(`type=${encodeURIComponent(type)}`);
  return parts.join('&');
}

/** `{ identity, name, type }` of a link's fragment (`#…`), each null when it is not there. */
export function readFragment(hash) {
  const found = { identity: null, name: null, type: null };
  for (const part of hash.replace(/^#/, '').split('&')) {
    const [key, value] = part.split(/=(.*)/s);
    const decoded = () => {
      try {
        return decodeURIComponent(value ?? '');
      } catch {
        return value;
      }
    };
    if (/^AGE-SECRET-KEY-1/i.test(part)) found.identity = part;
    else if (key === 'name') found.name = decoded();
    else if (key === 'type') found.type = decoded();
  }
  return found;
}

/** A new identity for one file: the key its link carries. */
export async function newIdentity() {
  return (await library()).generateX25519Identity();
}

/**
 * Sealing for a new file, to `identity`'s recipient or with `passphrase`: `prefix` is the header
 * and nonce, `seal(index, plaintext, last)` one sealed chunk.
 */
export async function newSealer(secret) {
  const lib = await library();
  const encrypter = new lib.Encrypter();
  if (secret.passphrase) encrypter.setPassphrase(secret.passphrase);
  else encrypter.addRecipient(await lib.identityToRecipient(secret.identity));
  // An empty payload's file: its header and nonce are a new file's, and its one empty chunk is
  // dropped. The file key comes back out of the header, as anyone opening the file gets it.
  const empty = await encrypter.encrypt(new Uint8Array(0));
  const length = headerLength(empty);
  const fileKey = await decrypterFor(lib, secret).decryptHeader(empty.subarray(0, length));
  const key = await payloadKey(lib, fileKey, empty.subarray(length, length + NONCE));
  const seal = (index, plaintext, last) => lib.chacha20poly1305(key, chunkNonce(index, last)).encrypt(plaintext);
  return {
    prefix: empty.slice(0, length + NONCE),
    seal,
    /** The chunks of `plain` sealed, from chunk `first` on, as one buffer, in the workers. */
    sealRun: (first, plain, endsFile) =>
      inWorkers(lib, { op: 'seal', key, first, last: endsFile, total: 0, bytes: wholeBuffer(plain) }),
  };
}

/** Workers that seal and open chunks (static/js/age-worker.js): one per core, at least two, at most four. */
const WORKERS = Math.min(4, Math.max(2, globalThis.navigator?.hardwareConcurrency ?? 2));
let pool = null;

/** The workers, started the first time; an empty list where workers cannot start. */
function chunkWorkers() {
  if (pool !== null) return pool;
  pool = [];
  try {
    for (let n = 0; n < WORKERS; n += 1) pool.push(startWorker());
  } catch {
    pool = [];
  }
  return pool;
}

function startWorker() {
  const worker = new Worker(new URL('./age-worker.js', import.meta.url), { type: 'module' });
  const pending = new Map();
  let jobs = 0;
  const failAll = (reason) => {
    for (const { reject } of pending.values()) reject(new Error(reason));
    pending.clear();
  };
  worker.onmessage = ({ data: { job, bytes, error } }) => {
    const waiting = pending.get(job);
    pending.delete(job);
    if (error) waiting?.reject(new Error(error));
    else waiting?.resolve(new Uint8Array(bytes));
  };
  worker.onerror = (event) => {
    event.preventDefault();
    failAll('the encryption worker failed to start');
  };
  return {
    run(message) {
      jobs += 1;
      const job = jobs;
      return new Promise((resolve, reject) => {
        pending.set(job, { resolve, reject });
        worker.postMessage({ ...message, job }, [message.bytes]);
      });
    },
  };
}

/**
 * Seals (`op` 'seal') or opens ('open') a run of chunks with the payload `key` and the cipher
 * `chacha` (typage's chacha20poly1305): `input` holds chunks `first`, `first + 1`, ... (plaintext
 * chunks of CHUNK bytes, or sealed ones of SEALED), the last maybe shorter; `last` says whether the
 * run's last chunk is the file's last, `total` how many chunks the file has (for the reason a chunk
 * does not open). One output buffer, the same bytes chunk by chunk work gives. What the workers
 * run, and the page where they cannot.
 */
export function runChunks(chacha, { op, key, first, last, total, bytes }) {
  const input = new Uint8Array(bytes);
  const [from, to] = op === 'seal' ? [CHUNK, SEALED] : [SEALED, CHUNK];
  const count = Math.max(1, Math.ceil(input.length / from));
  const output = new Uint8Array(op === 'seal' ? input.length + TAG * count : input.length - TAG * count);
  for (let n = 0; n < count; n += 1) {
    const piece = input.subarray(n * from, Math.min(input.length, (n + 1) * from));
    const cipher = chacha(key, chunkNonce(first + n, last && n === count - 1));
    if (op === 'seal') {
      output.set(cipher.encrypt(piece), n * to);
      continue;
    }
    try {
      output.set(cipher.decrypt(piece), n * to);
    } catch {
      throw new Error(`chunk ${first + n + 1} of ${total} does not open: the file was changed or cut`);
    }
  }
  return output;
}

/** The bytes `view` shows as a buffer of their own (the one it has if it shows all of it). */
const wholeBuffer = (view) =>
  view.byteOffset === 0 && view.byteLength === view.buffer.byteLength ? view.buffer : view.slice().buffer;

/**
 * A run of chunks sealed or opened (see `runChunks`), cut into one part per worker and worked on
 * side by side; where workers cannot run, here.
 */
async function inWorkers(lib, message) {
  const { op, first, last, bytes } = message;
  const input = new Uint8Array(bytes);
  const [from, to] = op === 'seal' ? [CHUNK, SEALED] : [SEALED, CHUNK];
  const count = Math.max(1, Math.ceil(input.length / from));
  const output = new Uint8Array(op === 'seal' ? input.length + TAG * count : input.length - TAG * count);
  const workers = chunkWorkers();
  const perPart = Math.ceil(count / Math.max(1, workers.length));
  const parts = [];
  for (let part = 0; part * perPart < count; part += 1) {
    const start = part * perPart;
    const stop = Math.min(count, start + perPart);
    const piece = input.slice(start * from, Math.min(input.length, stop * from)).buffer;
    const partMessage = { ...message, first: first + start, last: last && stop === count, bytes: piece };
    const work =
      workers.length > 0
        ? workers[part].run(partMessage)
        : Promise.resolve().then(() => runChunks(lib.chacha20poly1305, partMessage));
    parts.push(work.then((done) => output.set(done, start * to)));
  }
  await Promise.all(parts);
  return output;
}

/** The size of the age file of `plainSize` bytes that `sealer` makes. */
export function sealedSize(sealer, plainSize) {
  return sealer.prefix.length + plainSize + 16 * chunkCount(plainSize);
}

/**
 * `file`'s age file as tus-js-client's file source: any byte range of it, sealed from the
 * plaintext chunks it covers, so an upload resumes from wherever the server stands. While one
 * range is sent, the next one (of the same length) is sealed already.
 */
export function sealedSource(file, sealer) {
  const { prefix } = sealer;
  const count = chunkCount(file.size);
  const size = sealedSize(sealer, file.size);
  /** The range being sealed ahead: `{ start, stop, bytes }` (a promise of its parts). */
  let ahead = null;

  /** The parts of the age file's bytes from `start` to `stop`. */
  async function range(start, stop) {
    const parts = [];
    if (start < prefix.length) parts.push(prefix.subarray(start, Math.min(stop, prefix.length)));
    const from = Math.max(start, prefix.length) - prefix.length;
    const to = stop - prefix.length;
    if (to > from) {
      const first = Math.floor(from / SEALED);
      const last = Math.floor((to - 1) / SEALED);
      const plain = new Uint8Array(await file.slice(first * CHUNK, Math.min(file.size, (last + 1) * CHUNK)).arrayBuffer());
      const sealed = await sealer.sealRun(first, plain, last === count - 1);
      parts.push(sealed.subarray(from - first * SEALED, to - first * SEALED));
    }
    return parts;
  }

  return {
    size,
    async slice(start, end) {
      const stop = Math.min(end, size);
      const parts = ahead?.start === start && ahead?.stop === stop ? ahead.bytes : range(start, stop);
      ahead = null;
      const value = new Blob(await parts);
      if (stop < size) {
        const next = { start: stop, stop: Math.min(size, stop + (stop - start)) };
        next.bytes = range(next.start, next.stop);
        next.bytes.catch(() => {}); // a failure counts when (if) the range is asked for
        ahead = next;
      }
      return { value, done: stop >= size };
    },
    close() {
      ahead = null;
    },
  };
}

/**
 * Opening an age file of `fileSize` bytes whose beginning (header and nonce at least) is `head`,
 * with `secret` ({ identity } or { passphrase }). Throws a one-line reason for a wrong key or a
 * damaged header. `payloadStart` is where chunk 0 begins; `open(index, sealed)` gives a chunk's
 * plaintext or throws if it was changed, truncated or moved.
 */
export async function newOpener(head, fileSize, secret) {
  const lib = await library();
  const { key, payloadStart } = await openHeader(lib, head, secret);
  const opener = chunkOpener(lib, key, payloadStart, fileSize);
  return {
    ...opener,
    /**
     * Chunks `first`, `first + 1`, ... opened from `sealed` (whole sealed chunks, the last maybe
     * the file's short last one), in the workers: their plaintext as one buffer, or the reason the
     * first that does not open gives.
     */
    openRun: (first, sealed) =>
      inWorkers(lib, {
        op: 'open',
        key,
        first,
        last: first + Math.ceil(sealed.length / SEALED) === opener.count,
        total: opener.count,
        bytes: wholeBuffer(sealed),
      }),
  };
}

/** The payload key of the age file beginning with `head`, and where chunk 0 begins; newOpener's reasons. */
async function openHeader(lib, head, secret) {
  const length = headerLength(head);
  if (length < 0 || head.length < length + NONCE) throw new Error('the file ends inside its age header');
  let fileKey;
  try {
    fileKey = await decrypterFor(lib, secret).decryptHeader(head.subarray(0, length));
  } catch (error) {
    const reason = String(error?.message ?? error);
    if (reason.includes('AGE-SECRET-KEY')) throw new Error('the key in the link is not a whole age key: copy the whole link');
    if (/no identity matched|incorrect passphrase|decrypt|MAC/i.test(reason)) {
      throw new Error(secret.passphrase ? 'wrong passphrase for this file' : 'wrong key for this file: check the whole link');
    }
    throw new Error(`the file's age header is damaged (${reason})`);
  }
  return { key: await payloadKey(lib, fileKey, head.subarray(length, length + NONCE)), payloadStart: length + NONCE };
}

/**
 * newOpener's opener for a payload whose key (HKDF of the file key and nonce) is `key` and whose
 * chunk 0 begins at `payloadStart`: what a service worker is handed (see `newKeyedOpener`), so it
 * opens the chunks without the link's key, and without `import()`, which service workers lack:
 * `lib` is the vendored age.js module, imported statically there.
 */
export function chunkOpener(lib, key, payloadStart, fileSize) {
  const payload = fileSize - payloadStart;
  const count = Math.ceil(payload / SEALED);
  if (payload < 16 || (payload % SEALED !== 0 && payload % SEALED < 16)) {
    throw new Error('the file is truncated: its size fits no age payload');
  }
  return {
    payloadStart,
    count,
    /** The plaintext size the whole file opens to. */
    plainSize: payload - 16 * count,
    open(index, sealed) {
      try {
        return lib.chacha20poly1305(key, chunkNonce(index, index === count - 1)).decrypt(sealed);
      } catch {
        throw new Error(`chunk ${index + 1} of ${count} does not open: the file was changed or cut`);
      }
    },
  };
}

/**
 * newOpener's opener of the age file of `fileSize` bytes whose beginning is `head`, with the
 * payload key it holds (`{ opener, key }`): all that `chunkOpener` needs. That key opens this
 * file's chunks and nothing else, not even its header.
 */
export async function newKeyedOpener(head, fileSize, secret) {
  const lib = await library();
  const { key, payloadStart } = await openHeader(lib, head, secret);
  return { opener: chunkOpener(lib, key, payloadStart, fileSize), key };
}
