// The encrypted page's player (/e/{id}, static/js/open-encrypted.js): a service worker that answers
// the page's <video> or <audio> at /e/{id}/stream with the plaintext, so the player seeks in a file
// of any size. Each Range of plaintext the player asks for becomes the age chunks that cover it,
// fetched from /f/{id} with Range a few at a time as the player reads, each opened alone; nothing
// else of the file is fetched. The page hands over the payload key (never the link's key, never in
// a URL) by postMessage when asked; a chunk that does not open ends the answer with an error and
// the page is told why, so the player never gets wrong bytes.

import * as lib from './vendor/age.js';
import { CHUNK, SEALED, chunkOpener } from './js/age-stream.js';

const STREAM = /^\/e\/([^/]+)\/stream$/;
/** Chunks per ciphertext request: one first (a player probing a position reads a few KB), then twice as many each time, up to this (1 MiB). */
const MOST_CHUNKS = 16;
/** Sent with every ranged request (see `services::downloads`): the counted download this one goes on with. */
const GRANT_HEADER = 'Blobdrop-Download-Grant';

/** Per page (its client id): the stream it was handed, as a promise. */
const streams = new Map();

self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

self.addEventListener('fetch', (event) => {
  const url = new URL(event.request.url);
  const match = url.origin === self.location.origin && STREAM.exec(url.pathname);
  if (!match || event.request.method !== 'GET') return; // everything else goes to the server as it would
  event.respondWith(answer(event, decodeURIComponent(match[1])));
});

/** Asks the page `clientId` for what opens file `id`; its answer comes back on a port of its own. */
async function handedOver(clientId, id) {
  const known = streams.get(clientId);
  if (known) return known;
  const asked = (async () => {
    const client = clientId && (await self.clients.get(clientId));
    if (!client) throw new Error('the page that plays this file is gone');
    const channel = new MessageChannel();
    const reply = new Promise((resolve, reject) => {
      channel.port1.onmessage = ({ data }) => (data?.error ? reject(new Error(data.error)) : resolve(data));
      setTimeout(() => reject(new Error('the page did not hand over the key')), 10_000);
    });
    client.postMessage({ type: 'stream-key', id }, [channel.port2]);
    const stream = await reply;
    if (stream.id !== id) throw new Error('the page handed over another file');
    return { ...stream, opener: chunkOpener(lib, stream.key, stream.payloadStart, stream.fileSize) };
  })();
  streams.set(clientId, asked);
  asked.catch(() => streams.delete(clientId));
  return asked;
}

function tell(clientId, message) {
  self.clients.get(clientId).then((client) => client?.postMessage({ type: 'stream-error', message }));
}

/** `[first, last]` of a `Range: bytes=` header over `size` bytes; null when there is none; 'bad' when unsatisfiable. */
function requested(header, size) {
  if (!header) return null;
  const found = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!found || (found[1] === '' && found[2] === '')) return null;
  let first;
  let last;
  if (found[1] === '') {
    first = Math.max(0, size - Number(found[2]));
    last = size - 1;
  } else {
    first = Number(found[1]);
    last = found[2] === '' ? size - 1 : Math.min(Number(found[2]), size - 1);
  }
  return first >= size || first > last ? 'bad' : [first, last];
}

async function answer(event, id) {
  const clientId = event.clientId || event.resultingClientId;
  let stream;
  try {
    stream = await handedOver(clientId, id);
  } catch (error) {
    return new Response(`${error.message}\n`, { status: 503, headers: { 'Content-Type': 'text/plain' } });
  }
  const size = stream.opener.plainSize;
  const range = requested(event.request.headers.get('Range'), size);
  if (range === 'bad') return new Response(null, { status: 416, headers: { 'Content-Range': `bytes */${size}` } });
  const [first, last] = range ?? [0, size - 1];
  const headers = {
    'Content-Type': stream.type,
    'Content-Length': String(last - first + 1),
    'Accept-Ranges': 'bytes',
    'Cache-Control': 'no-store',
  };
  if (range) headers['Content-Range'] = `bytes ${first}-${last}/${size}`;
  const body = size === 0 ? null : plaintext(stream, first, last, (message) => tell(clientId, message));
  return new Response(body, { status: range ? 206 : 200, headers });
}

/**
 * Plaintext bytes `first..=last` of `stream`, fetched as they are read: each pull fetches the next
 * few chunks with one Range request and opens them. A cancel (the player seeks elsewhere) stops it.
 */
function plaintext(stream, first, last, fail) {
  const { opener, id, grant } = stream;
  const lastChunk = Math.floor(last / CHUNK);
  let next = Math.floor(first / CHUNK);
  let batch = 1;
  const aborts = new AbortController();
  return new ReadableStream({
    async pull(controller) {
      const upTo = Math.min(lastChunk, next + batch - 1);
      batch = Math.min(MOST_CHUNKS, batch * 2);
      try {
        const from = opener.payloadStart + next * SEALED;
        const to = Math.min(opener.payloadStart + (upTo + 1) * SEALED, stream.fileSize) - 1;
        const headers = { Range: `bytes=${from}-${to}`, ...(stream.etag && { 'If-Range': stream.etag }), ...(grant && { [GRANT_HEADER]: grant }) };
        const response = await fetch(`/f/${encodeURIComponent(id)}`, { headers, credentials: 'same-origin', cache: 'no-store', signal: aborts.signal });
        if (response.status !== 206 || !response.headers.get('Content-Range')?.startsWith(`bytes ${from}-${to}/`)) {
          throw new Error(`the server answered ${response.status} to a part of the file (is the link used up or gone?)`);
        }
        const sealed = new Uint8Array(await response.arrayBuffer());
        if (sealed.length !== to - from + 1) throw new Error('the server sent a part of the file cut short');
        for (let index = next; index <= upTo; index += 1) {
          const at = (index - next) * SEALED;
          const plain = opener.open(index, sealed.subarray(at, Math.min(sealed.length, at + SEALED)));
          const base = index * CHUNK;
          controller.enqueue(plain.subarray(Math.max(first - base, 0), Math.min(last + 1 - base, plain.length)));
        }
        next = upTo + 1;
        if (next > lastChunk) controller.close();
      } catch (error) {
        if (aborts.signal.aborted) return;
        fail(error.message);
        controller.error(error);
      }
    },
    cancel() {
      aborts.abort();
    },
  }, { highWaterMark: 0 });
}
