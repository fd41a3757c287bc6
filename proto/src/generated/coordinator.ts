import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';

import type { AcquireRequest as _fencing_v1_AcquireRequest, AcquireRequest__Output as _fencing_v1_AcquireRequest__Output } from './fencing/v1/AcquireRequest.js';
import type { AcquireResponse as _fencing_v1_AcquireResponse, AcquireResponse__Output as _fencing_v1_AcquireResponse__Output } from './fencing/v1/AcquireResponse.js';
import type { CoordinatorClient as _fencing_v1_CoordinatorClient, CoordinatorDefinition as _fencing_v1_CoordinatorDefinition } from './fencing/v1/Coordinator.js';
import type { DescribeRequest as _fencing_v1_DescribeRequest, DescribeRequest__Output as _fencing_v1_DescribeRequest__Output } from './fencing/v1/DescribeRequest.js';
import type { DescribeResponse as _fencing_v1_DescribeResponse, DescribeResponse__Output as _fencing_v1_DescribeResponse__Output } from './fencing/v1/DescribeResponse.js';
import type { ForceReleaseRequest as _fencing_v1_ForceReleaseRequest, ForceReleaseRequest__Output as _fencing_v1_ForceReleaseRequest__Output } from './fencing/v1/ForceReleaseRequest.js';
import type { ForceReleaseResponse as _fencing_v1_ForceReleaseResponse, ForceReleaseResponse__Output as _fencing_v1_ForceReleaseResponse__Output } from './fencing/v1/ForceReleaseResponse.js';
import type { Lease as _fencing_v1_Lease, Lease__Output as _fencing_v1_Lease__Output } from './fencing/v1/Lease.js';
import type { ReleaseRequest as _fencing_v1_ReleaseRequest, ReleaseRequest__Output as _fencing_v1_ReleaseRequest__Output } from './fencing/v1/ReleaseRequest.js';
import type { ReleaseResponse as _fencing_v1_ReleaseResponse, ReleaseResponse__Output as _fencing_v1_ReleaseResponse__Output } from './fencing/v1/ReleaseResponse.js';
import type { RenewRequest as _fencing_v1_RenewRequest, RenewRequest__Output as _fencing_v1_RenewRequest__Output } from './fencing/v1/RenewRequest.js';
import type { RenewResponse as _fencing_v1_RenewResponse, RenewResponse__Output as _fencing_v1_RenewResponse__Output } from './fencing/v1/RenewResponse.js';
import type { SinkRef as _fencing_v1_SinkRef, SinkRef__Output as _fencing_v1_SinkRef__Output } from './fencing/v1/SinkRef.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  fencing: {
    v1: {
      AcquireRequest: MessageTypeDefinition<_fencing_v1_AcquireRequest, _fencing_v1_AcquireRequest__Output>
      AcquireResponse: MessageTypeDefinition<_fencing_v1_AcquireResponse, _fencing_v1_AcquireResponse__Output>
      Coordinator: SubtypeConstructor<typeof grpc.Client, _fencing_v1_CoordinatorClient> & { service: _fencing_v1_CoordinatorDefinition }
      DescribeRequest: MessageTypeDefinition<_fencing_v1_DescribeRequest, _fencing_v1_DescribeRequest__Output>
      DescribeResponse: MessageTypeDefinition<_fencing_v1_DescribeResponse, _fencing_v1_DescribeResponse__Output>
      ForceReleaseRequest: MessageTypeDefinition<_fencing_v1_ForceReleaseRequest, _fencing_v1_ForceReleaseRequest__Output>
      ForceReleaseResponse: MessageTypeDefinition<_fencing_v1_ForceReleaseResponse, _fencing_v1_ForceReleaseResponse__Output>
      Lease: MessageTypeDefinition<_fencing_v1_Lease, _fencing_v1_Lease__Output>
      ReleaseRequest: MessageTypeDefinition<_fencing_v1_ReleaseRequest, _fencing_v1_ReleaseRequest__Output>
      ReleaseResponse: MessageTypeDefinition<_fencing_v1_ReleaseResponse, _fencing_v1_ReleaseResponse__Output>
      RenewRequest: MessageTypeDefinition<_fencing_v1_RenewRequest, _fencing_v1_RenewRequest__Output>
      RenewResponse: MessageTypeDefinition<_fencing_v1_RenewResponse, _fencing_v1_RenewResponse__Output>
      SinkRef: MessageTypeDefinition<_fencing_v1_SinkRef, _fencing_v1_SinkRef__Output>
    }
  }
}

