import type { Config } from "../config.js";
import type { Db } from "../db/client.js";
import { deliverWebhooks, type WebhookSenderDeps } from "../modules/webhooks/webhook-delivery.service.js";
import { loadSecretBox } from "../secrets/secret-box.js";
import { startLoop } from "./loop.js";

/** What delivery needs of the configuration: the key that opens endpoint secrets, and where deliveries may go. */
export function webhookSenderDeps(config: Config): WebhookSenderDeps {
  return {
    secrets: loadSecretBox({ encryptionKey: config.encryptionKey, dataDir: config.dataDir }),
    destinations: { allowPrivateNetworks: config.webhookAllowPrivateNetworks },
  };
}

/** Delivers webhooks every `intervalSeconds` until stopped; a failed pass is reported and the loop goes on. */
export function startWebhookSender(
  db: Db,
  deps: WebhookSenderDeps & { intervalSeconds: number; onError(error: unknown): void },
) {
  return startLoop(() => deliverWebhooks(db, deps), deps);
}
