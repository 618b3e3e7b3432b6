/** `all`: API and workers in one process (the embedded default); `api` and `worker` scale out. */
export const ROLES = ['all', 'api', 'worker'] as const;
export type Role = (typeof ROLES)[number];
