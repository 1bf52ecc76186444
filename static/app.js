// blobdrop's browser code, the entry of every page: it only starts each feature of static/js/.
// No build step: the two libraries it uses are vendored in static/vendor (tus-js-client, and typage
// for age). Every page works without it but an encrypted file's; each feature starts only if the
// page has its elements, and nothing writes inline styles (the CSP forbids them): state shows
// through classes and `hidden`.

import { initConfirmForms } from './js/confirm.js';
import { initCopyButtons } from './js/copy.js';
import { initEncryptedShare } from './js/encrypted-share.js';
import { markCurrentNav } from './js/nav.js';
import { initOpenEncrypted } from './js/open-encrypted.js';
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
initOpenEncrypted();
initEncryptedShare();
