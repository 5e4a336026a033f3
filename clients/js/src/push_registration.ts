// The device's push target (docs/protocol.md "Push"): PUSH_CONFIG, PUSH_REGISTER and PUSH_UNREGISTER, and the
// target sent again after every later AUTH (a revocation unregisters it on the server; a new session of the
// same device registers it again). QimClient exposes its methods; not part of the public API.
import type { ServerFrame } from './frames.js';
import type { PushClientFrame, PushConfig, PushProvider, PushRegistered, PushUnregistered } from './push.js';

type Unref<T> = T extends unknown ? Omit<T, 'ref'> : never;

/** What the registration needs of the client. */
export interface PushHost {
  /** Waits until online, then sends the frame with a fresh ref and resolves with its answer. */
  call(frame: Unref<PushClientFrame>): Promise<ServerFrame>;
  error(e: Error): void;
}

export class PushRegistration {
  private target: { provider: PushProvider; token: string } | null = null;

  constructor(private readonly host: PushHost) {}

  async config(): Promise<PushConfig> {
    return (await this.host.call({ type: 'PUSH_CONFIG' })) as PushConfig;
  }

  async register(provider: PushProvider, token: string): Promise<PushRegistered> {
    const ok = (await this.host.call({ type: 'PUSH_REGISTER', provider, token })) as PushRegistered;
    this.target = { provider, token };
    return ok;
  }

  async unregister(): Promise<PushUnregistered> {
    this.target = null;
    return (await this.host.call({ type: 'PUSH_UNREGISTER' })) as PushUnregistered;
  }

  /** A new session is online: the target again, if one is registered (a failure is an `error` event). */
  again(): void {
    const target = this.target;
    if (!target) return;
    this.host.call({ type: 'PUSH_REGISTER', ...target }).catch((e: Error) => this.host.error(e));
  }
}
