// blobdrop's browser code, the entry of every page: it only starts each feature of static/js/.
// No build step and no dependencies. Every page works without it; each feature starts only if the
// page has its elements, and nothing writes inline styles (the CSP forbids them): state shows
// through classes and `hidden`.

import { initConfirmForms } from './js/confirm.js';
import { initCopyButtons } from './js/copy.js';
import { markCurrentNav } from './js/nav.js';
import { initShareSelected } from './js/shares.js';
import { labelTableCells } from './js/tables.js';
import { initThumbnails } from './js/thumbnails.js';
import { initUploadPage } from './js/upload-page.js';
import { initWebhooks } from './js/webhooks.js';

initConfirmForms();
initCopyButtons();
labelTableCells();
markCurrentNav();
initUploadPage();
initShareSelected();
initWebhooks();
initThumbnails();
