import type { TLSSocket } from 'node:tls';
import { BadRequestException, Body, Controller, ForbiddenException, Headers, HttpCode, Inject, Post, Req } from '@nestjs/common';
import type { AdmissionReviewReply } from '@outrigger/admission';
import type { FastifyRequest } from 'fastify';
import { injectorConfig, type InjectorConfig } from '../config/injector.config.js';
import { AdmissionService } from './admission.service.js';

@Controller()
export class MutateController {
  constructor(
    private readonly admission: AdmissionService,
    @Inject(injectorConfig.KEY) private readonly config: InjectorConfig,
  ) {}

  @Post('mutate')
  @HttpCode(200)
  mutate(@Req() request: FastifyRequest, @Headers('content-type') contentType: string | undefined, @Body() body: unknown): AdmissionReviewReply {
    // With a client CA configured, only callers holding a certificate it signed (the API server) may ask.
    if (this.config.tls.clientCaFile && !(request.raw.socket as TLSSocket).authorized) {
      throw new ForbiddenException('a client certificate signed by the configured client CA is required');
    }
    const result = this.admission.review(contentType, body);
    if (!result.ok) throw new BadRequestException(result.error);
    return result.value;
  }
}
