/**
 * `webmpc/enclave`: reaching an enclave-server from a browser or Node (browser-safe). The
 * server itself is Node-only: `webmpc/enclave/server` (`startEnclaveServer`) or
 * `npx webmpc enclave-server`. The teleport protocols (`protocol: 'teleport-yao'`,
 * `teleportOtSender` / `teleportOtReceiver` from `webmpc`) take {@link EnclaveOptions}.
 */
export { EnclaveLink, MAX_LINK_FRAME, withEnclaveLink, type EnclaveLinkOptions } from './link.js';
export { type EnclaveOptions, type EnclavePolicy } from './client.js';
