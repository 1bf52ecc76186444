// The webhooks section of the settings page: add one (its secret shown once), remove one, send a
// test event and show how its delivery went. Everything goes through /api/webhooks.

const csrfToken = () => document.querySelector('meta[name="csrf-token"]')?.content ?? '';

/** Where the secret waits across the reload that lists the new webhook: read and removed at once. */
const SECRET_KEY = 'blobdrop-new-webhook-secret';

async function api(method, path, body) {
  const headers = { 'X-CSRF-Token': csrfToken(), Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
  });
  if (!response.ok) {
    const text = (await response.text()).trim().split('\n', 1)[0];
    throw new Error(text && !text.startsWith('<') ? text : `${response.status} ${response.statusText}`.trim());
  }
  return response.status === 204 ? null : response.json();
}

function showError(message) {
  const error = document.getElementById('webhook-error');
  error.textContent = message;
  error.hidden = false;
}

function showNewSecret() {
  const secret = sessionStorage.getItem(SECRET_KEY);
  if (!secret) return;
  sessionStorage.removeItem(SECRET_KEY);
  document.getElementById('new-webhook-secret').textContent = secret;
  document.getElementById('new-webhook').hidden = false;
}

/** Waits (up to about 10 s) until the test delivery has been tried, so the reload shows its answer. */
async function waitForAttempt(webhookId, deliveryId) {
  for (let tries = 0; tries < 20; tries += 1) {
    const deliveries = await api('GET', `/api/webhooks/${webhookId}/deliveries`);
    if (deliveries.some((delivery) => delivery.id === deliveryId && delivery.attempts > 0)) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

export function initWebhooks() {
  const section = document.getElementById('webhooks');
  if (!section) return;
  showNewSecret();
  document.getElementById('webhook-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const form = event.target;
    const events = [...form.querySelectorAll('input[name="events"]:checked')].map((box) => box.value);
    try {
      const created = await api('POST', '/api/webhooks', { url: form.url.value, format: form.format.value, events });
      sessionStorage.setItem(SECRET_KEY, created.secret);
      window.location.reload();
    } catch (error) {
      showError(error.message);
    }
  });
  section.addEventListener('click', async (event) => {
    const button = event.target.closest('button[data-webhook-id]');
    if (!button) return;
    const id = button.dataset.webhookId;
    try {
      if (button.classList.contains('webhook-delete')) {
        if (!window.confirm('Remove this webhook and its deliveries?')) return;
        await api('DELETE', `/api/webhooks/${id}`);
      } else if (button.classList.contains('webhook-test')) {
        button.disabled = true;
        button.textContent = 'Sending…';
        const queued = await api('POST', `/api/webhooks/${id}/test`);
        await waitForAttempt(id, queued.delivery);
      } else {
        return;
      }
      window.location.reload();
    } catch (error) {
      showError(error.message);
    }
  });
}
