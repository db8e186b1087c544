// The browser's device identity: an Ed25519 key pair made with WebCrypto,
// the private key non-extractable and kept in IndexedDB, used to sign the
// gateway's connect challenge (the v3 payload of gateway/auth).

const DB_NAME = "switchboard";
const STORE = "identity";
const KEY = "device";

function openDB() {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(DB_NAME, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(STORE);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

function tx(db, mode, fn) {
  return new Promise((resolve, reject) => {
    const t = db.transaction(STORE, mode);
    const req = fn(t.objectStore(STORE));
    t.oncomplete = () => resolve(req.result);
    t.onerror = () => reject(t.error);
    t.onabort = () => reject(t.error);
  });
}

/** base64url without padding, as the gateway expects keys and signatures. */
export function base64url(bytes) {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function hex(buf) {
  return Array.from(new Uint8Array(buf), (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Returns this browser's identity {id, publicKey, privateKey}, creating it
 * on first use, or null when the browser cannot (no secure context, no
 * Ed25519 in WebCrypto, IndexedDB disabled): the page then connects with
 * the token alone.
 */
export async function loadIdentity() {
  if (!window.isSecureContext || !window.crypto || !crypto.subtle || !window.indexedDB) return null;
  try {
    const db = await openDB();
    let rec = await tx(db, "readonly", (s) => s.get(KEY));
    if (!rec) {
      const pair = await crypto.subtle.generateKey({ name: "Ed25519" }, false, ["sign", "verify"]);
      const raw = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey));
      rec = {
        id: hex(await crypto.subtle.digest("SHA-256", raw)),
        publicKey: base64url(raw),
        privateKey: pair.privateKey,
        createdAt: Date.now(),
      };
      await tx(db, "readwrite", (s) => s.put(rec, KEY));
    }
    db.close();
    return rec;
  } catch (err) {
    console.warn("switchboard: no device identity:", err);
    return null;
  }
}

// normalize is NormalizeDeviceMetadata: trimmed, ASCII A–Z lowercased.
function normalize(s) {
  return (s || "").trim().replace(/[A-Z]/g, (c) => c.toLowerCase());
}

/**
 * Signs the connect challenge and returns connect's device member.
 * The payload is
 * v3|deviceId|clientId|clientMode|role|scopes|signedAtMs|token|nonce|platform|deviceFamily.
 */
export async function signConnect(identity, f) {
  const signedAt = Date.now();
  const payload = [
    "v3", identity.id, f.clientId, f.clientMode, f.role, f.scopes.join(","), String(signedAt),
    f.token, f.nonce, normalize(f.platform), normalize(f.deviceFamily),
  ].join("|");
  const sig = await crypto.subtle.sign({ name: "Ed25519" }, identity.privateKey, new TextEncoder().encode(payload));
  return { id: identity.id, publicKey: identity.publicKey, signature: base64url(new Uint8Array(sig)), signedAt, nonce: f.nonce };
}
