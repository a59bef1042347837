import { type FormEvent, useState } from "react";
import type { Member } from "../api/types";
import { useFormat } from "../app/format";
import { useOrg } from "../app/org-context";
import { useGraphql, useQuery } from "../app/use-query";
import { ActionButton, Flash } from "../components/action-button";
import { StateBadge } from "../components/badges";
import { ConfirmDialog } from "../components/confirm-dialog";
import { CopyButton } from "../components/copy-button";
import { DataTable } from "../components/data-table";
import { PageHeader, Section, usePageTitle } from "../components/page";
import { Async, InlineError } from "../components/states";
import { useI18n } from "../i18n";

const MEMBERS = `query Members { members { user_id email name role create_date } }`;
const ADD = `mutation AddMember($email: String!, $role: String!, $password: String) {
  addMember(email: $email, role: $role, password: $password) { temporary_password member { user_id email name role create_date } }
}`;
const CHANGE = `mutation ChangeRole($user_id: Int!, $role: String!) { changeMemberRole(user_id: $user_id, role: $role) { user_id role } }`;
const REMOVE = `mutation Remove($user_id: Int!) { removeMember(user_id: $user_id) }`;

function AddMemberForm({
  onAdded,
}: {
  onAdded: (message: string, temporaryPassword: string | null, email: string) => void;
}) {
  const { isOwner } = useOrg();
  const { t } = useI18n();
  const gql = useGraphql();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  const onSubmit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    const email = String(data.get("email") ?? "").trim();
    const password = String(data.get("password") ?? "");
    if (!email) {
      setError(new Error(t("panel.members.enter_email")));
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const result = await gql<{ addMember: { temporary_password: string | null; member: Member } }>(ADD, {
        email,
        role: String(data.get("role") ?? "member"),
        password: password || null,
      });
      form.reset();
      onAdded(
        t("panel.members.added", {
          email: result.addMember.member.email,
          role: t(`panel.state.${result.addMember.member.role}`),
        }),
        result.addMember.temporary_password,
        email,
      );
    } catch (caught) {
      setError(caught as Error);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={onSubmit} noValidate data-testid="add-member-form">
      <InlineError error={error} />
      <div className="form-grid">
        <div className="form-field">
          <label htmlFor="member-email">{t("panel.column.email")}</label>
          <input id="member-email" name="email" type="email" autoComplete="off" required />
        </div>
        <div className="form-field">
          <label htmlFor="member-role">{t("panel.members.role")}</label>
          <select id="member-role" name="role" defaultValue="member">
            <option value="member">{t("panel.members.role_member")}</option>
            <option value="admin">{t("panel.members.role_admin")}</option>
            {isOwner && <option value="owner">{t("panel.members.role_owner")}</option>}
          </select>
        </div>
        <div className="form-field">
          <label htmlFor="member-password">{t("panel.members.password")}</label>
          <input id="member-password" name="password" type="password" autoComplete="new-password" />
          <p className="hint">{t("panel.members.password_hint")}</p>
        </div>
      </div>
      <div className="form-actions">
        <button type="submit" className="button button-primary" disabled={busy} data-testid="add-member">
          {busy ? t("panel.members.adding") : t("panel.members.add")}
        </button>
      </div>
    </form>
  );
}

function RoleSelect({ member, onChanged }: { member: Member; onChanged: (message: string) => void }) {
  const { isOwner } = useOrg();
  const { t } = useI18n();
  const gql = useGraphql();
  const [pending, setPending] = useState<string | null>(null);
  const roles = isOwner ? ["member", "admin", "owner"] : ["member", "admin"];
  return (
    <>
      <label className="visually-hidden" htmlFor={`role-${member.user_id}`}>
        {t("panel.members.role_of", { email: member.email })}
      </label>
      <select
        id={`role-${member.user_id}`}
        value={member.role}
        onChange={(event) => setPending(event.target.value)}
        data-testid={`role-${member.user_id}`}
      >
        {roles.map((role) => (
          <option key={role} value={role}>
            {t(`panel.state.${role}`)}
          </option>
        ))}
      </select>
      <ConfirmDialog
        open={pending !== null}
        title={pending ? t(`panel.members.make.${pending}`, { email: member.email }) : ""}
        confirmLabel={t("panel.members.change_role")}
        onClose={() => setPending(null)}
        onConfirm={async () => {
          await gql(CHANGE, { user_id: member.user_id, role: pending });
          onChanged(t("panel.members.role_changed", { email: member.email, role: t(`panel.state.${pending}`) }));
        }}
      >
        <p>{pending ? t(`panel.members.role_help.${pending}`) : null}</p>
      </ConfirmDialog>
    </>
  );
}

export function MembersPage() {
  const { org, session, canWrite, isOwner } = useOrg();
  const { t, rich } = useI18n();
  const fmt = useFormat();
  const gql = useGraphql();
  usePageTitle(t("panel.nav.members"), org.name);
  const state = useQuery<{ members: Member[] }>(MEMBERS);
  const [flash, setFlash] = useState<string | null>(null);
  const [temporary, setTemporary] = useState<{ email: string; password: string } | null>(null);
  const done = (message: string) => {
    setFlash(message);
    state.reload();
  };

  return (
    <>
      <PageHeader title={t("panel.nav.members")}>
        <p className="muted">{t("panel.members.intro", { organization: org.name })}</p>
      </PageHeader>
      <Flash message={flash} />
      {temporary && (
        <section
          className="secret-panel card"
          aria-label={t("panel.members.temporary_password")}
          data-testid="temporary-password"
        >
          <p className="warning">
            {rich("panel.members.temporary_password_body", { email: <strong>{temporary.email}</strong> })}
          </p>
          <p className="secret-value">
            <code>{temporary.password}</code> <CopyButton value={temporary.password} />
          </p>
          <button type="button" className="button" onClick={() => setTemporary(null)}>
            {t("panel.common.done")}
          </button>
        </section>
      )}
      <Section title={t("panel.members.team")} id="team">
        <Async state={state}>
          {({ members }) => (
            <DataTable
              testId="table-members"
              caption={t("panel.nav.members")}
              rows={members.map((member) => ({ ...member, id: member.user_id }))}
              columns={[
                {
                  key: "email",
                  label: t("panel.members.person"),
                  render: (member) => (
                    <div>
                      <strong>{member.name ?? member.email}</strong>
                      {member.user_id === session.user.id && <span className="muted"> {t("panel.members.you")}</span>}
                      {member.name && <div className="muted small">{member.email}</div>}
                    </div>
                  ),
                },
                {
                  key: "role",
                  label: t("panel.members.role"),
                  render: (member) =>
                    canWrite && (isOwner || member.role !== "owner") ? (
                      <RoleSelect key={member.role} member={member} onChanged={done} />
                    ) : (
                      <StateBadge state={member.role} />
                    ),
                },
                {
                  key: "since",
                  label: t("panel.members.member_since"),
                  render: (member) => fmt.date(member.create_date),
                },
                {
                  key: "actions",
                  label: t("panel.column.actions"),
                  render: (member) =>
                    canWrite && (isOwner || member.role !== "owner") ? (
                      <ActionButton
                        label={
                          member.user_id === session.user.id ? t("panel.members.leave") : t("panel.members.remove")
                        }
                        title={t("panel.members.remove_title", { email: member.email, organization: org.name })}
                        confirmLabel={t("panel.members.remove")}
                        danger
                        className="button button-danger-outline button-small"
                        testId={`remove-${member.user_id}`}
                        run={() => gql(REMOVE, { user_id: member.user_id })}
                        onDone={() => {
                          if (member.user_id === session.user.id) window.location.assign("/admin/");
                          else done(t("panel.members.removed", { email: member.email }));
                        }}
                      >
                        <p>{t("panel.members.remove_body", { organization: org.name })}</p>
                      </ActionButton>
                    ) : (
                      <span className="muted">—</span>
                    ),
                },
              ]}
            />
          )}
        </Async>
      </Section>
      {canWrite ? (
        <Section title={t("panel.members.add_title")} id="add-member">
          <AddMemberForm
            onAdded={(message, password, email) => {
              if (password) setTemporary({ email, password });
              done(message);
            }}
          />
        </Section>
      ) : (
        <p className="notice">{t("panel.members.read_only", { role: t(`panel.state.${org.role}`) })}</p>
      )}
    </>
  );
}
