import { prepareCluster } from './cluster.js';

/** A suite that starts clusters itself, each against a deadline: what they run is built once, before any test, without one. */
export default async function setup(): Promise<void> {
  await prepareCluster();
}
