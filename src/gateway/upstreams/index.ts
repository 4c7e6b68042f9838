import type { UpstreamType } from './types';
import { anthropicUpstream } from './anthropic';
import { azureOpenAIUpstream } from './azure-openai';
import { bedrockUpstream } from './bedrock';
import { geminiUpstream } from './gemini';
import { openaiUpstream } from './openai';
import { vertexUpstream } from './vertex';

/** Every upstream type, by its `type` in `gateway.upstreams`: a new type is a module of this folder and a line here. */
export const UPSTREAM_TYPES = [
  anthropicUpstream,
  openaiUpstream,
  geminiUpstream,
  azureOpenAIUpstream,
  bedrockUpstream,
  vertexUpstream,
] as const;

export type UpstreamConfig = (typeof UPSTREAM_TYPES)[number] extends UpstreamType<infer C> ? C : never;
