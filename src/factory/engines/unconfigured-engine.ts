import type { AssetPlan } from '../assets/plan';
import { Analysis, EngineFailedError, FactoryEngine } from './engine';

/** Live mode with no INFERENCE_UPSTREAM_URL: every stage fails with a clear error, never a sandbox answer. */
export class UnconfiguredFactoryEngine implements FactoryEngine {
  readonly name = 'upstream' as const;

  analyze(): Promise<Analysis> {
    return Promise.reject(new EngineFailedError('Live generation needs a model server: set INFERENCE_UPSTREAM_URL (docs/factory.md).'));
  }

  plan(): Promise<AssetPlan> {
    return this.analyze() as never;
  }
}
