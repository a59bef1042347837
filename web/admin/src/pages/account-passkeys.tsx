import { useMemo, useState } from "react";
import {
  addPasskey,
  listPasskeys,
  PasskeyNotUsed,
  passkeysSupported,
  removePasskey,
  renamePasskey,
} from "../api/passkeys";
import { useLoad } from "../app/use-load";
import { ActionButton, Flash } from "../components/action-button";
import { DataTable } from "../components/data-table";
import { Section } from "../components/page";
import { Async, Empty } from "../components/states";
import { useI18n } from "../i18n";

/** The server's limit (src/identity/passkeys.service.ts). */
const MAX_NAME_LENGTH = 100;

const loadPasskeys = () => listPasskeys().then(({ items }) => items);

/** A name field inside a dialog (adding or renaming a passkey). */
function NameField({ value, onChange, hint }: { value: string; onChange: (value: string) => void; hint?: string }) {
  const { t } = useI18n();
  return (
    <div className="form-field">
      <label htmlFor="passkey-name">{t("panel.passkeys.name")}</label>
      <input
        id="passkey-name"
        value={value}
        maxLength={MAX_NAME_LENGTH}
        required
        onChange={(event) => onChange(event.target.value)}
        aria-describedby={hint ? "passkey-name-hint" : undefined}
      />
      {hint && (
        <p className="hint" id="passkey-name-hint">
          {hint}
        </p>
      )}
    </div>
  );
}

/**
 * The signed-in user's passkeys (the account's security page): each with its name, when it was added
 * and last used; add one on this device (the browser asks how), rename or remove one.
 */
/** `onRecoveryCodes`: a first second factor's recovery codes, for the page to show once. */
export function PasskeysSection({ onRecoveryCodes }: { onRecoveryCodes?: (codes: string[]) => void } = {}) {
  const { t, intlLocale } = useI18n();
  const state = useLoad(loadPasskeys);
  const [name, setName] = useState("");
  const [flash, setFlash] = useState<string | null>(null);
  const supported = passkeysSupported();
  const dateTime = useMemo(
    () => new Intl.DateTimeFormat(intlLocale, { dateStyle: "medium", timeStyle: "short" }),
    [intlLocale],
  );
  const when = (iso: string | null) => (iso ? dateTime.format(new Date(iso)) : t("panel.passkeys.never"));
  // The browser's refusal in the panel's words; the server's problems keep theirs.
  const worded = async (run: () => Promise<unknown>) => {
    try {
      await run();
    } catch (error) {
      if (!(error instanceof PasskeyNotUsed)) throw error;
      throw new Error(t(error.reason === "already_added" ? "panel.passkeys.already_added" : "panel.passkeys.not_used"));
    }
  };
  const nameProblem = () => {
    if (name.trim() === "") throw new Error(t("panel.passkeys.name_required"));
  };

  const add = supported ? (
    <ActionButton
      label={t("panel.passkeys.add")}
      title={t("panel.passkeys.add_title")}
      confirmLabel={t("panel.passkeys.add_confirm")}
      className="button button-primary"
      testId="add-passkey"
      onOpen={() => setName(t("panel.passkeys.default_name"))}
      run={() =>
        worded(async () => {
          nameProblem();
          const added = await addPasskey(name);
          if (added.recovery_codes) onRecoveryCodes?.(added.recovery_codes);
        })
      }
      onDone={() => {
        setFlash(t("panel.passkeys.added", { name: name.trim() }));
        state.reload();
      }}
    >
      <p>{t("panel.passkeys.add_body")}</p>
      <NameField value={name} onChange={setName} hint={t("panel.passkeys.name_hint")} />
    </ActionButton>
  ) : undefined;

  return (
    <Section title={t("panel.passkeys.title")} id="passkeys" actions={add}>
      <p className="muted">{t("panel.passkeys.intro")}</p>
      {!supported && <p className="muted">{t("panel.passkeys.unsupported")}</p>}
      <Flash message={flash} />
      <Async state={state}>
        {(passkeys) =>
          passkeys.length === 0 ? (
            <Empty>{t("panel.passkeys.none")}</Empty>
          ) : (
            <DataTable
              testId="passkeys"
              caption={t("panel.passkeys.title")}
              rows={passkeys}
              columns={[
                { key: "name", label: t("panel.passkeys.name"), wrap: true, render: (passkey) => passkey.name },
                { key: "created", label: t("panel.passkeys.created"), render: (passkey) => when(passkey.create_date) },
                {
                  key: "last_used",
                  label: t("panel.passkeys.last_used"),
                  render: (passkey) => <span data-testid="passkey-last-used">{when(passkey.last_used_date)}</span>,
                },
                {
                  key: "actions",
                  label: t("panel.passkeys.actions"),
                  render: (passkey) => (
                    <div className="form-actions">
                      <ActionButton
                        label={t("panel.passkeys.rename")}
                        title={t("panel.passkeys.rename_title", { name: passkey.name })}
                        confirmLabel={t("panel.passkeys.rename_confirm")}
                        testId="rename-passkey"
                        onOpen={() => setName(passkey.name)}
                        run={async () => {
                          nameProblem();
                          await renamePasskey(passkey.id, name);
                        }}
                        onDone={() => state.reload()}
                      >
                        <NameField value={name} onChange={setName} />
                      </ActionButton>
                      <ActionButton
                        label={t("panel.passkeys.remove")}
                        title={t("panel.passkeys.remove_title", { name: passkey.name })}
                        confirmLabel={t("panel.passkeys.remove_confirm")}
                        danger
                        testId="remove-passkey"
                        run={() => removePasskey(passkey.id)}
                        onDone={() => {
                          setFlash(t("panel.passkeys.removed", { name: passkey.name }));
                          state.reload();
                        }}
                      >
                        <p>{t("panel.passkeys.remove_body", { name: passkey.name })}</p>
                      </ActionButton>
                    </div>
                  ),
                },
              ]}
            />
          )
        }
      </Async>
    </Section>
  );
}
