import type { VendorDefinition, VendorName } from '../vendor';
import { anthropic } from './anthropic';
import { gemini } from './gemini';
import { openai } from './openai';

/**
 * Every vendor Genway speaks, in the order a request on a path several of them serve is offered to them when its
 * headers name none (OpenAI last: the default of OpenAI-compatible clients, which send only a Bearer key).
 */
export const VENDORS: readonly VendorDefinition[] = [anthropic, gemini, openai];

export const VENDOR_BY_NAME: Readonly<Record<VendorName, VendorDefinition>> = { anthropic, gemini, openai };
