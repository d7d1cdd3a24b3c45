import type { JsonObject } from './json-value.js';

/** The AdmissionReview versions kube-apiserver sends; replies must echo the one received. */
export const ADMISSION_API_VERSIONS = ['admission.k8s.io/v1', 'admission.k8s.io/v1beta1'] as const;
export type AdmissionApiVersion = (typeof ADMISSION_API_VERSIONS)[number];

export const ADMISSION_OPERATIONS = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'] as const;
export type AdmissionOperation = (typeof ADMISSION_OPERATIONS)[number];

export interface GroupVersionKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

export interface GroupVersionResource {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
}

export interface UserInfo {
  readonly username?: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

export interface AdmissionRequest {
  readonly uid: string;
  readonly kind: GroupVersionKind;
  readonly resource: GroupVersionResource;
  readonly subResource?: string;
  readonly requestKind?: GroupVersionKind;
  readonly requestResource?: GroupVersionResource;
  readonly requestSubResource?: string;
  /** Empty or absent for pods created with generateName (every controller-made pod). */
  readonly name?: string;
  /** The only reliable namespace: controller-made pods carry none in `object.metadata`. */
  readonly namespace?: string;
  readonly operation: AdmissionOperation;
  readonly userInfo: UserInfo;
  /** The raw object exactly as sent; never decoded into a typed model. */
  readonly object?: JsonObject;
  readonly oldObject?: JsonObject | null;
  readonly dryRun?: boolean;
  readonly options?: JsonObject | null;
}

export interface AdmissionReview {
  readonly apiVersion: AdmissionApiVersion;
  readonly kind: 'AdmissionReview';
  readonly request: AdmissionRequest;
}

/** metav1.Status as carried by a denial. */
export interface AdmissionStatus {
  readonly code: number;
  readonly message: string;
  readonly reason: string;
}

export interface AdmissionResponse {
  readonly uid: string;
  readonly allowed: boolean;
  readonly patchType?: 'JSONPatch';
  /** Base64 of the JSON Patch document. */
  readonly patch?: string;
  readonly warnings?: readonly string[];
  readonly auditAnnotations?: Readonly<Record<string, string>>;
  readonly status?: AdmissionStatus;
}

export interface AdmissionReviewReply {
  readonly apiVersion: AdmissionApiVersion;
  readonly kind: 'AdmissionReview';
  readonly response: AdmissionResponse;
}
