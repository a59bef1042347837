// One list of permissions for the server and the panel.
export { PERMISSION_DESCRIPTIONS, PERMISSIONS } from "../../../../src/auth/permissions";
