import { z } from 'zod';
import { DNS_LABEL, DNS_LABEL_MAX, DNS_SUBDOMAIN, DNS_SUBDOMAIN_MAX, isDnsLabel, isDnsSubdomain } from '@outrigger/admission';

// Each rule once, for both validators: the zod check (the services) and, in .meta(), the same
// constant as the CRD's pattern/maxLength (the API server).
export const dnsLabel = z
  .string()
  .refine(isDnsLabel, { error: 'must be a DNS label (lowercase letters, digits and "-", at most 63)' })
  .meta({ pattern: DNS_LABEL.source, maxLength: DNS_LABEL_MAX });

export const dnsSubdomain = z
  .string()
  .refine(isDnsSubdomain, { error: 'must be a DNS subdomain (lowercase letters, digits, "-" and ".", at most 253)' })
  .meta({ pattern: DNS_SUBDOMAIN.source, maxLength: DNS_SUBDOMAIN_MAX });
