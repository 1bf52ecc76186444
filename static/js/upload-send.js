// The requests of one upload: its bytes as a resumable (tus) upload, with progress, and the PATCH of its note.

// tus-js-client's distributed build (static/vendor, the version pinned in tests/tus/package.json):
// it defines window.tus.
import '../vendor/tus.min.js';
import { linkFragment, newIdentity, newSealer, sealedSource } from './age-stream.js';

const csrfToken = () => document.querySelector('meta[name="csrf-token"]')?.content ?? '';

const MIB = 1024 * 1024;
/** Requests well below the 100 MB that proxies such as Cloudflare take in one body. */
const CHUNK_SIZE = 50 * MIB;
/** After a network error the request is tried again after these pauses (ms), then given up. */
const RETRY_DELAYS = [0, 1000, 3000, 5000, 10000, 20000];

/**
 * The server answers errors with one line of text; anything else (an HTML page from a proxy, an
 * empty body) is replaced by the status so the list never shows markup.
 */
function failureReason(error) {
  const response = error?.originalResponse;
  const status = response?.getStatus?.() ?? 0;
  // The server's 401 text speaks to curl users; here the cause is an ended session.
  if (status === 401) return 'signed out; sign in again and retry';
  const line = String(response?.getBody?.() ?? '').trim().split('\n', 1)[0].trim();
  if (line && !line.startsWith('<') && line.length <= 300) return line;
  if (status) return `${status}`;
  return 'the connection was lost';
}

/**
 * tus-js-client's own HTTP stack, but a HEAD answered 5xx fails like a lost connection. On such an
 * answer tus-js-client gives the upload up and starts the file over; behind a proxy that is what a
 * server restart looks like (nginx answers 502 until the server is back), so a 2 GB upload cut
 * near its end began again from byte 0. Failed instead, the HEAD is retried after RETRY_DELAYS and
 * the upload goes on from where the server stands.
 */
function headRetryingStack() {
  const stack = new window.tus.DefaultHttpStack();
  return {
    createRequest(method, url) {
      const request = stack.createRequest(method, url);
      if (method !== 'HEAD') return request;
      const send = request.send.bind(request);
      request.send = async (body) => {
        const response = await send(body);
        if (response.getStatus() >= 500) throw new Error(`tus: HEAD answered ${response.getStatus()}`);
        return response;
      };
      return request;
    },
    getName: () => 'blobdrop',
  };
}

/** The upload options the page's headers ask for, as the upload's metadata. */
function metadataOf(file, headers) {
  const metadata = { filename: file.name, filetype: file.type || 'application/octet-stream' };
  if (headers['Max-Days']) metadata.expires = `${headers['Max-Days']}d`;
  if (headers['Expires-At']) metadata.expires_at = headers['Expires-At'];
  if (headers['Max-Downloads']) metadata.max_downloads = String(headers['Max-Downloads']);
  return metadata;
}

/**
 * One file as a resumable (tus) upload in requests of CHUNK_SIZE, retried with back-off on
 * network errors. Chosen again after a reload or a browser restart, the same file (name, type,
 * size, modification time) continues where it stopped: the progress bar starts there. `uploadTo`
 * is `/` for the owner, `/g/{id}/` on a guest link's page. Cancel deletes what was sent.
 */
export async function sendFile(row, headers, uploadTo, forOwner) {
  if (!row.encrypt) return send(row, headers, uploadTo, forOwner, null);
  // Fail closed: any failure to encrypt fails the upload, and the server holds an upload that
  // says it is age-encrypted to that (a plaintext body is refused), whatever this code does.
  // The files of an encrypted share share one identity (`row.identity`, a promise of it), each
  // file under its own file key all the same.
  let sealing;
  try {
    const identity = await (row.identity ?? newIdentity());
    sealing = { identity, sealer: await newSealer({ identity }) };
  } catch (error) {
    return { ok: false, reason: `could not encrypt: ${error?.message ?? error}` };
  }
  return send(row, headers, uploadTo, forOwner, sealing);
}

/** The link to an encrypted file's page: the key, name and type in its fragment, never sent. */
function encryptedLink(file, sealing, plain) {
  return `${new URL(file.url).origin}/e/${file.id}#${linkFragment(sealing.identity, plain.name, plain.type)}`;
}

function send(row, headers, uploadTo, forOwner, sealing) {
  const endpoint = forOwner ? '/api/uploads' : `${uploadTo}uploads`;
  const metadata = metadataOf(row.file, headers);
  if (sealing) {
    const filename = row.placeholder ?? 'encrypted.age';
    Object.assign(metadata, { filename, filetype: 'application/octet-stream', encryption: 'age' });
  }
  return new Promise((resolve) => {
    let file = null;
    const upload = new window.tus.Upload(row.file, {
      endpoint,
      chunkSize: CHUNK_SIZE,
      retryDelays: RETRY_DELAYS,
      httpStack: headRetryingStack(),
      metadata,
      headers: { 'X-CSRF-Token': csrfToken() },
      // An encrypted upload resumes within the page (every byte range of it can be sealed again),
      // not after a reload: its key lives only in this page.
      storeFingerprintForResuming: !sealing,
      removeFingerprintOnSuccess: true,
      ...(sealing && { fileReader: { openFile: async () => sealedSource(row.file, sealing.sealer) } }),
      onProgress(sent, total) {
        row.onProgress(sent, total);
        // The body is sent but the server still commits the last chunks.
        if (sent === total && row.li.dataset.state === 'uploading') row.setState('saving', 'Saving');
      },
      onAfterResponse(_request, response) {
        const url = response.getHeader('X-File-Url');
        if (url) {
          const id = url.split('/f/')[1]?.split('/')[0] ?? '';
          file = { id, url, delete_url: response.getHeader('X-Url-Delete') };
        }
      },
      onSuccess() {
        if (file && sealing) file = { ...file, url: encryptedLink(file, sealing, row.file) };
        resolve(file ? { ok: true, file } : { ok: false, reason: 'the server answered no link' });
      },
      onError(error) {
        resolve({ ok: false, reason: failureReason(error) });
      },
    });
    row.xhr = {
      abort() {
        upload.abort(true).catch(() => {}).finally(() => resolve({ ok: false, cancelled: true }));
      },
    };
    if (sealing) return upload.start();
    upload
      .findPreviousUploads()
      .then((previous) => {
        if (previous.length > 0) upload.resumeFromPreviousUpload(previous[0]);
      })
      .catch(() => {})
      .finally(() => upload.start());
  });
}

/** null when the note was saved, else the one-line reason it was not. */
export async function saveNote(id, note) {
  try {
    const response = await fetch(`/api/files/${encodeURIComponent(id)}`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrfToken(), Accept: 'application/json' },
      body: JSON.stringify({ note }),
      credentials: 'same-origin',
    });
    if (response.ok) return null;
    const text = (await response.text()).trim().split('\n', 1)[0];
    return text && !text.startsWith('<') ? text : `${response.status} ${response.statusText}`.trim();
  } catch {
    return 'network error';
  }
}
