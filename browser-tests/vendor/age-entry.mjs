// What the page takes from typage (the npm package age-encryption) and its noble primitives,
// bundled into static/vendor/age.js by scripts/vendor-age: the header (a file key wrapped for an
// X25519 recipient or a passphrase) from typage, the payload's key derivation and cipher from
// noble, so static/js/age-stream.js can seal and open each 64 KiB chunk by itself.
export { Decrypter, Encrypter, generateX25519Identity, identityToRecipient } from 'age-encryption';
export { chacha20poly1305 } from '@noble/ciphers/chacha.js';
export { hkdf } from '@noble/hashes/hkdf.js';
export { sha256 } from '@noble/hashes/sha2.js';
