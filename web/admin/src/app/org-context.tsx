import { createContext, useContext } from "react";
import type { Session, SessionOrganization } from "../api/session";

export interface OrgContextValue {
  session: Session;
  org: SessionOrganization;
  /** owner or admin: may change data, install applications and manage members. */
  canWrite: boolean;
  isOwner: boolean;
  /** Path inside the organization: `path("campaigns")` → `/o/demo/campaigns`. */
  path: (sub?: string) => string;
}

export const OrgContext = createContext<OrgContextValue | null>(null);

export function useOrg(): OrgContextValue {
  const value = useContext(OrgContext);
  if (!value) throw new Error("useOrg outside an organization page");
  return value;
}

export function orgContextValue(session: Session, org: SessionOrganization): OrgContextValue {
  const base = `/o/${encodeURIComponent(org.slug)}`;
  return {
    session,
    org,
    canWrite: org.role === "owner" || org.role === "admin",
    isOwner: org.role === "owner",
    path: (sub = "") => (sub ? `${base}/${sub.replace(/^\//, "")}` : `${base}/`),
  };
}
