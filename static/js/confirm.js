// The question before a destructive form (one with data-confirm, such as delete or revoke) is sent.

export function initConfirmForms() {
  // Capture phase, so the question comes before any other submit handler could act.
  document.addEventListener(
    'submit',
    (event) => {
      const form = event.target;
      if (!(form instanceof HTMLFormElement) || !form.dataset.confirm) return;
      if (!window.confirm(form.dataset.confirm)) {
        event.preventDefault();
        event.stopImmediatePropagation();
      }
    },
    true,
  );
}
