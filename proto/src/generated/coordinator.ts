import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';

import type { AcquireRequest as _fencing_v1_AcquireRequest, AcquireRequest__Output as _fencing_v1_AcquireRequest__Output } from './fencing/v1/AcquireRequest.js';
import type { AcquireResponse as _fencing_v1_AcquireResponse, AcquireResponse__Output as _fencing_v1_AcquireResponse__Output } from './fencing/v1/AcquireResponse.js';
import type { AdvanceFenceRequest as _fencing_v1_AdvanceFenceRequest, AdvanceFenceRequest__Output as _fencing_v1_AdvanceFenceRequest__Output } from './fencing/v1/AdvanceFenceRequest.js';
import type { AdvanceFenceResponse as _fencing_v1_AdvanceFenceResponse, AdvanceFenceResponse__Output as _fencing_v1_AdvanceFenceResponse__Output } from './fencing/v1/AdvanceFenceResponse.js';
import type { AdvanceFenceStreamRequest as _fencing_v1_AdvanceFenceStreamRequest, AdvanceFenceStreamRequest__Output as _fencing_v1_AdvanceFenceStreamRequest__Output } from './fencing/v1/AdvanceFenceStreamRequest.js';
import type { AdvanceFenceStreamResponse as _fencing_v1_AdvanceFenceStreamResponse, AdvanceFenceStreamResponse__Output as _fencing_v1_AdvanceFenceStreamResponse__Output } from './fencing/v1/AdvanceFenceStreamResponse.js';
import type { CoordinatorClient as _fencing_v1_CoordinatorClient, CoordinatorDefinition as _fencing_v1_CoordinatorDefinition } from './fencing/v1/Coordinator.js';
import type { DescribeRequest as _fencing_v1_DescribeRequest, DescribeRequest__Output as _fencing_v1_DescribeRequest__Output } from './fencing/v1/DescribeRequest.js';
import type { DescribeResponse as _fencing_v1_DescribeResponse, DescribeResponse__Output as _fencing_v1_DescribeResponse__Output } from './fencing/v1/DescribeResponse.js';
import type { ForceReleaseRequest as _fencing_v1_ForceReleaseRequest, ForceReleaseRequest__Output as _fencing_v1_ForceReleaseRequest__Output } from './fencing/v1/ForceReleaseRequest.js';
import type { ForceReleaseResponse as _fencing_v1_ForceReleaseResponse, ForceReleaseResponse__Output as _fencing_v1_ForceReleaseResponse__Output } from './fencing/v1/ForceReleaseResponse.js';
import type { GetFenceRequest as _fencing_v1_GetFenceRequest, GetFenceRequest__Output as _fencing_v1_GetFenceRequest__Output } from './fencing/v1/GetFenceRequest.js';
import type { GetFenceResponse as _fencing_v1_GetFenceResponse, GetFenceResponse__Output as _fencing_v1_GetFenceResponse__Output } from './fencing/v1/GetFenceResponse.js';
import type { Lease as _fencing_v1_Lease, Lease__Output as _fencing_v1_Lease__Output } from './fencing/v1/Lease.js';
import type { LeaseStreamRequest as _fencing_v1_LeaseStreamRequest, LeaseStreamRequest__Output as _fencing_v1_LeaseStreamRequest__Output } from './fencing/v1/LeaseStreamRequest.js';
import type { LeaseStreamResponse as _fencing_v1_LeaseStreamResponse, LeaseStreamResponse__Output as _fencing_v1_LeaseStreamResponse__Output } from './fencing/v1/LeaseStreamResponse.js';
import type { ListResultsRequest as _fencing_v1_ListResultsRequest, ListResultsRequest__Output as _fencing_v1_ListResultsRequest__Output } from './fencing/v1/ListResultsRequest.js';
import type { ListResultsResponse as _fencing_v1_ListResultsResponse, ListResultsResponse__Output as _fencing_v1_ListResultsResponse__Output } from './fencing/v1/ListResultsResponse.js';
import type { ReadRequest as _fencing_v1_ReadRequest, ReadRequest__Output as _fencing_v1_ReadRequest__Output } from './fencing/v1/ReadRequest.js';
import type { ReadResponse as _fencing_v1_ReadResponse, ReadResponse__Output as _fencing_v1_ReadResponse__Output } from './fencing/v1/ReadResponse.js';
import type { ReleaseRequest as _fencing_v1_ReleaseRequest, ReleaseRequest__Output as _fencing_v1_ReleaseRequest__Output } from './fencing/v1/ReleaseRequest.js';
import type { ReleaseResponse as _fencing_v1_ReleaseResponse, ReleaseResponse__Output as _fencing_v1_ReleaseResponse__Output } from './fencing/v1/ReleaseResponse.js';
import type { RenewRequest as _fencing_v1_RenewRequest, RenewRequest__Output as _fencing_v1_RenewRequest__Output } from './fencing/v1/RenewRequest.js';
import type { RenewResponse as _fencing_v1_RenewResponse, RenewResponse__Output as _fencing_v1_RenewResponse__Output } from './fencing/v1/RenewResponse.js';
import type { SinkClient as _fencing_v1_SinkClient, SinkDefinition as _fencing_v1_SinkDefinition } from './fencing/v1/Sink.js';
import type { SinkRef as _fencing_v1_SinkRef, SinkRef__Output as _fencing_v1_SinkRef__Output } from './fencing/v1/SinkRef.js';
import type { WriteRefusal as _fencing_v1_WriteRefusal, WriteRefusal__Output as _fencing_v1_WriteRefusal__Output } from './fencing/v1/WriteRefusal.js';
import type { WriteRequest as _fencing_v1_WriteRequest, WriteRequest__Output as _fencing_v1_WriteRequest__Output } from './fencing/v1/WriteRequest.js';
import type { WriteResponse as _fencing_v1_WriteResponse, WriteResponse__Output as _fencing_v1_WriteResponse__Output } from './fencing/v1/WriteResponse.js';
import type { WriteStreamRequest as _fencing_v1_WriteStreamRequest, WriteStreamRequest__Output as _fencing_v1_WriteStreamRequest__Output } from './fencing/v1/WriteStreamRequest.js';
import type { WriteStreamResponse as _fencing_v1_WriteStreamResponse, WriteStreamResponse__Output as _fencing_v1_WriteStreamResponse__Output } from './fencing/v1/WriteStreamResponse.js';
import type { Any as _google_protobuf_Any, Any__Output as _google_protobuf_Any__Output } from './google/protobuf/Any.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  fencing: {
    v1: {
      AcquireRequest: MessageTypeDefinition<_fencing_v1_AcquireRequest, _fencing_v1_AcquireRequest__Output>
      AcquireResponse: MessageTypeDefinition<_fencing_v1_AcquireResponse, _fencing_v1_AcquireResponse__Output>
      AdvanceFenceRequest: MessageTypeDefinition<_fencing_v1_AdvanceFenceRequest, _fencing_v1_AdvanceFenceRequest__Output>
      AdvanceFenceResponse: MessageTypeDefinition<_fencing_v1_AdvanceFenceResponse, _fencing_v1_AdvanceFenceResponse__Output>
      AdvanceFenceStreamRequest: MessageTypeDefinition<_fencing_v1_AdvanceFenceStreamRequest, _fencing_v1_AdvanceFenceStreamRequest__Output>
      AdvanceFenceStreamResponse: MessageTypeDefinition<_fencing_v1_AdvanceFenceStreamResponse, _fencing_v1_AdvanceFenceStreamResponse__Output>
      Coordinator: SubtypeConstructor<typeof grpc.Client, _fencing_v1_CoordinatorClient> & { service: _fencing_v1_CoordinatorDefinition }
      DescribeRequest: MessageTypeDefinition<_fencing_v1_DescribeRequest, _fencing_v1_DescribeRequest__Output>
      DescribeResponse: MessageTypeDefinition<_fencing_v1_DescribeResponse, _fencing_v1_DescribeResponse__Output>
      ForceReleaseRequest: MessageTypeDefinition<_fencing_v1_ForceReleaseRequest, _fencing_v1_ForceReleaseRequest__Output>
      ForceReleaseResponse: MessageTypeDefinition<_fencing_v1_ForceReleaseResponse, _fencing_v1_ForceReleaseResponse__Output>
      GetFenceRequest: MessageTypeDefinition<_fencing_v1_GetFenceRequest, _fencing_v1_GetFenceRequest__Output>
      GetFenceResponse: MessageTypeDefinition<_fencing_v1_GetFenceResponse, _fencing_v1_GetFenceResponse__Output>
      Lease: MessageTypeDefinition<_fencing_v1_Lease, _fencing_v1_Lease__Output>
      LeaseStreamRequest: MessageTypeDefinition<_fencing_v1_LeaseStreamRequest, _fencing_v1_LeaseStreamRequest__Output>
      LeaseStreamResponse: MessageTypeDefinition<_fencing_v1_LeaseStreamResponse, _fencing_v1_LeaseStreamResponse__Output>
      ListResultsRequest: MessageTypeDefinition<_fencing_v1_ListResultsRequest, _fencing_v1_ListResultsRequest__Output>
      ListResultsResponse: MessageTypeDefinition<_fencing_v1_ListResultsResponse, _fencing_v1_ListResultsResponse__Output>
      ReadRequest: MessageTypeDefinition<_fencing_v1_ReadRequest, _fencing_v1_ReadRequest__Output>
      ReadResponse: MessageTypeDefinition<_fencing_v1_ReadResponse, _fencing_v1_ReadResponse__Output>
      ReleaseRequest: MessageTypeDefinition<_fencing_v1_ReleaseRequest, _fencing_v1_ReleaseRequest__Output>
      ReleaseResponse: MessageTypeDefinition<_fencing_v1_ReleaseResponse, _fencing_v1_ReleaseResponse__Output>
      RenewRequest: MessageTypeDefinition<_fencing_v1_RenewRequest, _fencing_v1_RenewRequest__Output>
      RenewResponse: MessageTypeDefinition<_fencing_v1_RenewResponse, _fencing_v1_RenewResponse__Output>
      Sink: SubtypeConstructor<typeof grpc.Client, _fencing_v1_SinkClient> & { service: _fencing_v1_SinkDefinition }
      SinkRef: MessageTypeDefinition<_fencing_v1_SinkRef, _fencing_v1_SinkRef__Output>
      WriteRefusal: MessageTypeDefinition<_fencing_v1_WriteRefusal, _fencing_v1_WriteRefusal__Output>
      WriteRequest: MessageTypeDefinition<_fencing_v1_WriteRequest, _fencing_v1_WriteRequest__Output>
      WriteResponse: MessageTypeDefinition<_fencing_v1_WriteResponse, _fencing_v1_WriteResponse__Output>
      WriteStreamRequest: MessageTypeDefinition<_fencing_v1_WriteStreamRequest, _fencing_v1_WriteStreamRequest__Output>
      WriteStreamResponse: MessageTypeDefinition<_fencing_v1_WriteStreamResponse, _fencing_v1_WriteStreamResponse__Output>
    }
  }
  google: {
    protobuf: {
      Any: MessageTypeDefinition<_google_protobuf_Any, _google_protobuf_Any__Output>
    }
  }
}

