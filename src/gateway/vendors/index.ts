import type { VendorDefinition, VendorName } from '../vendor';
import { anthropic } from './anthropic';
import { bedrock } from './bedrock';
import { vertex } from './vertex';
import { gemini } from './gemini';
import { openai } from './openai';

/**
 * Every vendor Genway speaks, in the order a request on a path several of them serve is offered to them when its
 * headers name none (OpenAI last: the default of OpenAI-compatible clients, which send only a Bearer key).
 */
export const VENDORS: readonly VendorDefinition<VendorName>[] = [anthropic, gemini, openai];

export const VENDOR_BY_NAME: { readonly [N in VendorName]: VendorDefinition<N> } = {
  anthropic,
  gemini,
  openai,
};

/** Claude Code's other two gateway formats: Claude on Bedrock and on Vertex, served under their mounts only. */
export const CLOUD_FORMATS: readonly VendorDefinition[] = [bedrock, vertex];

/** Every format clients call Genway in. */
export const INBOUND: readonly VendorDefinition[] = [...VENDORS, ...CLOUD_FORMATS];
