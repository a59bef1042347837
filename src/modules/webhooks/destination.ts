import { promises as dns, lookup } from "node:dns";
import type { LookupFunction } from "node:net";
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";
import { AppError } from "../../errors/app-error.js";

/**
 * Where a webhook may go. An endpoint is an address on the public internet, over https: an address
 * that is, or resolves to, loopback, private, link-local (cloud metadata at 169.254.169.254),
 * unique-local, carrier-grade NAT, multicast or reserved space is refused when the endpoint is
 * saved and again at every delivery, when the connection is made (a name that resolved to a public
 * address yesterday and to 127.0.0.1 today is caught there). WEBHOOK_ALLOW_PRIVATE_NETWORKS=true
 * lifts both rules for a receiver on the same machine or network.
 */
export interface DestinationPolicy {
  allowPrivateNetworks: boolean;
}

export class BlockedDestinationError extends Error {
  override name = "BlockedDestinationError";
}

/** Only public unicast addresses; an IPv4 address written as IPv6 (::ffff:10.0.0.1) is judged as IPv4. */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.process(address);
  // IPv4-compatible IPv6 (::a.b.c.d, deprecated): never a public destination.
  if (parsed.kind() === "ipv6" && (parsed as ipaddr.IPv6).parts.slice(0, 6).every((part) => part === 0)) return false;
  return parsed.range() === "unicast";
}

const refused = (message: string) =>
  new AppError("webhook_url_refused", `Invalid webhook URL: ${message}`, { errors: [{ field: "url", message }] });

/** Checks an endpoint's address when it is saved: its form, its scheme, and where its name resolves now. */
export async function checkWebhookUrl(raw: string, policy: DestinationPolicy): Promise<string> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refused("not an absolute URL");
  }
  if (url.protocol !== "https:" && !(policy.allowPrivateNetworks && url.protocol === "http:")) {
    throw refused(
      policy.allowPrivateNetworks ? "only http and https URLs are accepted" : "the URL must use https (TLS)",
    );
  }
  if (url.username || url.password) throw refused("the URL must not carry a user name or password");
  if (url.hash) throw refused("the URL must not carry a fragment (#…)");
  if (policy.allowPrivateNetworks) return url.href;
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = (await dns.lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);
    } catch {
      throw refused(`the host name "${host}" does not resolve`);
    }
  }
  const blocked = addresses.find((address) => !isPublicAddress(address));
  if (blocked !== undefined) {
    throw refused(
      `"${host}" is or resolves to ${blocked}, a loopback, private, link-local or reserved address; webhooks go to public addresses only`,
    );
  }
  return url.href;
}

/**
 * The resolver a delivery connects with: the name is resolved as usual, and an answer holding an
 * address that is not public fails the connection before it is made.
 */
export function guardedLookup(policy: DestinationPolicy): LookupFunction | undefined {
  if (policy.allowPrivateNetworks) return undefined;
  return (hostname, options, callback) => {
    lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, "", 0);
      const list = addresses as unknown as { address: string; family: number }[];
      const blocked = list.find((entry) => !isPublicAddress(entry.address));
      if (blocked) {
        return callback(
          new BlockedDestinationError(`${hostname} resolves to ${blocked.address}, which is not a public address`),
          "",
          0,
        );
      }
      if (options.all) return (callback as unknown as (e: null, a: typeof list) => void)(null, list);
      const first = list[0];
      if (!first) return callback(new BlockedDestinationError(`${hostname} has no address`), "", 0);
      callback(null, first.address, first.family);
    });
  };
}

/** A literal address in the URL is connected to without a lookup: it is judged here. */
export function checkLiteralHost(url: URL, policy: DestinationPolicy) {
  if (policy.allowPrivateNetworks) return;
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  if (isIP(host) && !isPublicAddress(host)) {
    throw new BlockedDestinationError(`${host} is not a public address`);
  }
  if (url.protocol !== "https:") throw new BlockedDestinationError("only https URLs are delivered to");
}
