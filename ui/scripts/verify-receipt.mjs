// Verifies an Assent receipt with `jose` (panva/jose, an implementation nobody here wrote):
// node verify-receipt.mjs TOKEN JWKS-FILE. Prints {"header", "claims"} and exits 0 when valid;
// prints the library's error and exits 1 when not.
import { compactVerify, createLocalJWKSet } from "jose";
import { readFileSync } from "node:fs";

const [token, jwksFile] = process.argv.slice(2);
const keys = createLocalJWKSet(JSON.parse(readFileSync(jwksFile, "utf8")));
try {
  const { payload, protectedHeader } = await compactVerify(token, keys, { algorithms: ["EdDSA"] });
  console.log(JSON.stringify({ header: protectedHeader, claims: JSON.parse(new TextDecoder().decode(payload)) }));
} catch (e) {
  console.log(`refused: ${e.code ?? e.name}`);
  process.exit(1);
}
