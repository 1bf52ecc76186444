// The requests of one upload: the PUT of its bytes (with progress) and the PATCH of its note.

const csrfToken = () => document.querySelector('meta[name="csrf-token"]')?.content ?? '';

/**
 * The server answers errors with one line of text; anything else (an HTML page from a proxy, an
 * empty body) is replaced by the status line so the list never shows markup.
 */
function failureReason(xhr) {
  // The server's 401 text speaks to curl users; here the cause is an ended session.
  if (xhr.status === 401) return 'signed out; sign in again and retry';
  const text = (xhr.responseText ?? '').trim();
  const line = text.split('\n', 1)[0].trim();
  if (line && !line.startsWith('<') && line.length <= 300) return line;
  if (xhr.status) return `${xhr.status} ${xhr.statusText}`.trim();
  return 'the connection was lost';
}

/**
 * One PUT with XHR rather than fetch: fetch still cannot report upload progress. `uploadTo` is
 * `/` for the owner, `/g/{id}/` on a guest link's page.
 */
export function sendFile(row, headers, uploadTo) {
  return new Promise((resolve) => {
    const xhr = new XMLHttpRequest();
    row.xhr = xhr;
    xhr.open('PUT', `${uploadTo}${encodeURIComponent(row.file.name)}`);
    xhr.setRequestHeader('Accept', 'application/json');
    xhr.setRequestHeader('X-CSRF-Token', csrfToken());
    for (const [name, value] of Object.entries(headers)) xhr.setRequestHeader(name, value);
    xhr.upload.addEventListener('progress', (event) => {
      if (event.lengthComputable) row.onProgress(event.loaded, event.total);
    });
    // The body is sent but the server still hashes and commits the last chunks.
    xhr.upload.addEventListener('load', () => {
      if (row.li.dataset.state === 'uploading') row.setState('saving', 'Saving');
    });
    xhr.addEventListener('load', () => {
      if (xhr.status === 201 || xhr.status === 200) {
        try {
          resolve({ ok: true, file: JSON.parse(xhr.responseText) });
        } catch {
          resolve({ ok: false, reason: 'the server answered something that is not JSON' });
        }
      } else {
        resolve({ ok: false, reason: failureReason(xhr) });
      }
    });
    xhr.addEventListener('error', () => resolve({ ok: false, reason: 'network error' }));
    xhr.addEventListener('abort', () => resolve({ ok: false, cancelled: true }));
    xhr.send(row.file);
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
