import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from "node:crypto";
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from "@simplewebauthn/server";
import { isoCBOR } from "@simplewebauthn/server/helpers";

const sha256 = (data: Uint8Array | string) => createHash("sha256").update(data).digest();
const b64 = (data: Uint8Array) => Buffer.from(data).toString("base64url");
const uint32 = (value: number) => {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(value);
  return bytes;
};

// Authenticator data flags (WebAuthn §6.1): user present, user verified, attested credential data.
const UP = 0x01;
const UV = 0x04;
const AT = 0x40;

interface StoredCredential {
  id: string;
  privateKey: KeyObject;
  rpId: string;
  userHandle: string;
  counter: number;
}

/**
 * A software authenticator for HTTP-level tests: ES256 passkeys with "none" attestation, answering
 * the server's options as a browser would (clientDataJSON for `origin`), each assertion counting up.
 */
export class SoftAuthenticator {
  readonly credentials = new Map<string, StoredCredential>();
  constructor(
    readonly origin: string,
    /** counterless: signs every assertion with counter 0, as synced passkeys do (replays then rest on the challenge alone). */
    readonly options: { userVerified?: boolean; counterless?: boolean } = {},
  ) {}

  private flags(extra = 0) {
    return UP | (this.options.userVerified === false ? 0 : UV) | extra;
  }

  private clientData(type: "webauthn.create" | "webauthn.get", challenge: string) {
    return Buffer.from(JSON.stringify({ type, challenge, origin: this.origin, crossOrigin: false }));
  }

  create(options: PublicKeyCredentialCreationOptionsJSON): RegistrationResponseJSON {
    const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const jwk = publicKey.export({ format: "jwk" });
    const cose = isoCBOR.encode(
      new Map<number, number | Uint8Array>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(jwk.x as string, "base64url")],
        [-3, Buffer.from(jwk.y as string, "base64url")],
      ]),
    );
    const rawId = randomBytes(16);
    const rpId = options.rp.id as string;
    const length = Buffer.alloc(2);
    length.writeUInt16BE(rawId.length);
    const authData = Buffer.concat([
      sha256(rpId),
      Buffer.from([this.flags(AT)]),
      uint32(0),
      Buffer.alloc(16),
      length,
      rawId,
      Buffer.from(cose),
    ]);
    const attestationObject = isoCBOR.encode(
      new Map<string, string | Uint8Array | Map<string, string>>([
        ["fmt", "none"],
        ["attStmt", new Map<string, string>()],
        ["authData", authData],
      ]),
    );
    const id = b64(rawId);
    this.credentials.set(id, { id, privateKey, rpId, userHandle: options.user.id, counter: 0 });
    return {
      id,
      rawId: id,
      type: "public-key",
      response: {
        clientDataJSON: b64(this.clientData("webauthn.create", options.challenge)),
        attestationObject: b64(attestationObject),
        transports: ["internal"],
      },
      clientExtensionResults: {},
    };
  }

  /** An assertion with one of its credentials (the one named, else the only one, else the first allowed). */
  get(options: PublicKeyCredentialRequestOptionsJSON, credentialId?: string): AuthenticationResponseJSON {
    const allowed = options.allowCredentials?.map((credential) => credential.id) ?? [];
    const id =
      credentialId ?? allowed.find((candidate) => this.credentials.has(candidate)) ?? [...this.credentials.keys()][0];
    const credential = id ? this.credentials.get(id) : undefined;
    if (!credential) throw new Error("this authenticator holds no such credential");
    if (!this.options.counterless) credential.counter++;
    const authData = Buffer.concat([sha256(credential.rpId), Buffer.from([this.flags()]), uint32(credential.counter)]);
    const clientDataJSON = this.clientData("webauthn.get", options.challenge);
    const signature = sign("sha256", Buffer.concat([authData, sha256(clientDataJSON)]), credential.privateKey);
    return {
      id: credential.id,
      rawId: credential.id,
      type: "public-key",
      response: {
        clientDataJSON: b64(clientDataJSON),
        authenticatorData: b64(authData),
        signature: b64(signature),
        userHandle: credential.userHandle,
      },
      clientExtensionResults: {},
    };
  }
}
