// The main navigation's mark on the current section (aria-current).

/** The server may already mark the current section; if not, the path says which one it is. */
export function markCurrentNav() {
  const links = [...document.querySelectorAll('.site-header nav a[href^="/"]')];
  if (links.length === 0 || links.some((link) => link.hasAttribute('aria-current'))) return;
  const path = location.pathname;
  const current = links
    .filter((link) => {
      const href = link.getAttribute('href');
      return href === '/' ? path === '/' : path === href || path.startsWith(`${href}/`);
    })
    .sort((a, b) => b.getAttribute('href').length - a.getAttribute('href').length)[0];
  current?.setAttribute('aria-current', 'page');
}
