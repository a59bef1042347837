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

const MEMBERS = `query Members { members { user_id email name role create_date } }`;
const ADD = `mutation AddMember($email: String!, $role: String!, $password: String) {
  addMember(email: $email, role: $role, password: $password) { temporary_password member { user_id email name role create_date } }
}`;
const CHANGE = `mutation ChangeRole($user_id: Int!, $role: String!) { changeMemberRole(user_id: $user_id, role: $role) { user_id role } }`;
const REMOVE = `mutation Remove($user_id: Int!) { removeMember(user_id: $user_id) }`;

const ROLE_HELP: Record<string, string> = {
  owner: "Everything, including managing owners",
  admin: "Everything except granting or removing the owner role",
  member: "Reads data; cannot change it, install apps or manage members",
};

function AddMemberForm({
  onAdded,
}: {
  onAdded: (message: string, temporaryPassword: string | null, email: string) => void;
}) {
  const { isOwner } = useOrg();
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
      setError(new Error("Enter an email address."));
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
        `${result.addMember.member.email} added as ${result.addMember.member.role}.`,
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
          <label htmlFor="member-email">Email</label>
          <input id="member-email" name="email" type="email" autoComplete="off" required />
        </div>
        <div className="form-field">
          <label htmlFor="member-role">Role</label>
          <select id="member-role" name="role" defaultValue="member">
            <option value="member">Member</option>
            <option value="admin">Admin</option>
            {isOwner && <option value="owner">Owner</option>}
          </select>
        </div>
        <div className="form-field">
          <label htmlFor="member-password">Password (optional)</label>
          <input id="member-password" name="password" type="password" autoComplete="new-password" />
          <p className="hint">For a new account only. Leave empty to get a temporary password to hand over.</p>
        </div>
      </div>
      <div className="form-actions">
        <button type="submit" className="button button-primary" disabled={busy} data-testid="add-member">
          {busy ? "Adding…" : "Add member"}
        </button>
      </div>
    </form>
  );
}

function RoleSelect({ member, onChanged }: { member: Member; onChanged: (message: string) => void }) {
  const { isOwner } = useOrg();
  const gql = useGraphql();
  const [pending, setPending] = useState<string | null>(null);
  const roles = isOwner ? ["member", "admin", "owner"] : ["member", "admin"];
  return (
    <>
      <label className="visually-hidden" htmlFor={`role-${member.user_id}`}>
        Role of {member.email}
      </label>
      <select
        id={`role-${member.user_id}`}
        value={member.role}
        onChange={(event) => setPending(event.target.value)}
        data-testid={`role-${member.user_id}`}
      >
        {roles.map((role) => (
          <option key={role} value={role}>
            {role}
          </option>
        ))}
      </select>
      <ConfirmDialog
        open={pending !== null}
        title={`Make ${member.email} ${pending === "admin" || pending === "owner" ? "an" : "a"} ${pending}?`}
        confirmLabel="Change role"
        onClose={() => setPending(null)}
        onConfirm={async () => {
          await gql(CHANGE, { user_id: member.user_id, role: pending });
          onChanged(`${member.email} is now ${pending}.`);
        }}
      >
        <p>{pending ? ROLE_HELP[pending] : null}.</p>
      </ConfirmDialog>
    </>
  );
}

export function MembersPage() {
  const { org, session, canWrite, isOwner } = useOrg();
  const fmt = useFormat();
  const gql = useGraphql();
  usePageTitle("Members", org.name);
  const state = useQuery<{ members: Member[] }>(MEMBERS);
  const [flash, setFlash] = useState<string | null>(null);
  const [temporary, setTemporary] = useState<{ email: string; password: string } | null>(null);
  const done = (message: string) => {
    setFlash(message);
    state.reload();
  };

  return (
    <>
      <PageHeader title="Members">
        <p className="muted">People who can sign in to {org.name}'s admin panel.</p>
      </PageHeader>
      <Flash message={flash} />
      {temporary && (
        <section className="secret-panel card" aria-label="Temporary password" data-testid="temporary-password">
          <p className="warning">
            Temporary password for <strong>{temporary.email}</strong>, shown once. Hand it over securely; they can sign
            in with it right away.
          </p>
          <p className="secret-value">
            <code>{temporary.password}</code> <CopyButton value={temporary.password} />
          </p>
          <button type="button" className="button" onClick={() => setTemporary(null)}>
            Done
          </button>
        </section>
      )}
      <Section title="Team" id="team">
        <Async state={state}>
          {({ members }) => (
            <DataTable
              testId="table-members"
              caption="Members"
              rows={members.map((member) => ({ ...member, id: member.user_id }))}
              columns={[
                {
                  key: "email",
                  label: "Person",
                  render: (member) => (
                    <div>
                      <strong>{member.name ?? member.email}</strong>
                      {member.user_id === session.user.id && <span className="muted"> (you)</span>}
                      {member.name && <div className="muted small">{member.email}</div>}
                    </div>
                  ),
                },
                {
                  key: "role",
                  label: "Role",
                  render: (member) =>
                    canWrite && (isOwner || member.role !== "owner") ? (
                      <RoleSelect key={member.role} member={member} onChanged={done} />
                    ) : (
                      <StateBadge state={member.role} />
                    ),
                },
                { key: "since", label: "Member since", render: (member) => fmt.date(member.create_date) },
                {
                  key: "actions",
                  label: "Actions",
                  render: (member) =>
                    canWrite && (isOwner || member.role !== "owner") ? (
                      <ActionButton
                        label={member.user_id === session.user.id ? "Leave" : "Remove"}
                        title={`Remove ${member.email} from ${org.name}?`}
                        confirmLabel="Remove"
                        danger
                        className="button button-danger-outline button-small"
                        testId={`remove-${member.user_id}`}
                        run={() => gql(REMOVE, { user_id: member.user_id })}
                        onDone={() => {
                          if (member.user_id === session.user.id) window.location.assign("/admin/");
                          else done(`${member.email} removed.`);
                        }}
                      >
                        <p>They can no longer sign in to {org.name}. Their account stays for other organizations.</p>
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
        <Section title="Add a member" id="add-member">
          <AddMemberForm
            onAdded={(message, password, email) => {
              if (password) setTemporary({ email, password });
              done(message);
            }}
          />
        </Section>
      ) : (
        <p className="notice">Only owners and admins can add or remove members. Your role is {org.role}.</p>
      )}
    </>
  );
}
