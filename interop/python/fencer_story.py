"""A stock Python gRPC client of Fencer, built from the .proto files alone.

It plays the takeover story against a running coordinator and sink and prints
one JSON object of what it observed, so a test in any language can check it.
Errors are read the way PROTOCOL.md promises any client can: the reason from
the `fencing-reason` trailer, and the google.rpc.Status details
(ErrorInfo, BadRequest) from `grpc-status-details-bin`.

usage: fencer_story.py GENERATED_DIR COORDINATOR SINK TOKEN_A TOKEN_B
(TOKEN_* may be "-" when the services run --insecure)
"""
import json
import sys
import uuid

sys.path.insert(0, sys.argv[1])

import grpc  # noqa: E402
from fencing.v1 import coordinator_pb2, coordinator_pb2_grpc, sink_pb2, sink_pb2_grpc  # noqa: E402
from google.rpc import error_details_pb2, status_pb2  # noqa: E402

coordinator_address, sink_address, token_a, token_b = sys.argv[2:6]
CODE_NAMES = {code.value[0]: code.name for code in grpc.StatusCode}


def auth(token):
    return [] if token == "-" else [("authorization", f"Bearer {token}")]


def failure(error):
    """Code, reason and details of a failed call, from the trailers alone."""
    trailers = dict(error.trailing_metadata() or ())
    out = {"code": error.code().name, "trailer_reason": trailers.get("fencing-reason")}
    raw = trailers.get("grpc-status-details-bin")
    if raw:
        out.update(status_details(status_pb2.Status.FromString(raw)))
    return out


def status_details(status):
    """Reason, domain, metadata and bad fields of a google.rpc.Status."""
    out = {}
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            out.update(reason=info.reason, domain=info.domain, metadata=dict(info.metadata))
        elif detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            out["fields"] = [v.field for v in bad.field_violations]
    return out


def attempt(call, *args, **kwargs):
    try:
        return {"ok": call(*args, timeout=5, **kwargs)}
    except grpc.RpcError as error:
        return {"error": failure(error)}


coordinator = coordinator_pb2_grpc.CoordinatorStub(grpc.insecure_channel(coordinator_address))
sink = sink_pb2_grpc.SinkStub(grpc.insecure_channel(sink_address))
resource = f"interop-{uuid.uuid4()}"
seen = {}

a = coordinator.Acquire(coordinator_pb2.AcquireRequest(
    request_id=str(uuid.uuid4()), resource=resource, owner_id="worker-a", incarnation=1, ttl_ms=10_000),
    metadata=auth(token_a), timeout=5)
seen["a_token"] = a.lease.token
seen["a_write"] = sink_pb2.WriteResponse.Outcome.Name(sink.Write(sink_pb2.WriteRequest(
    resource=resource, token=a.lease.token, result_id="step-1", payload=b"from A"),
    metadata=auth(token_a), timeout=5).outcome)

held = attempt(coordinator.Acquire, coordinator_pb2.AcquireRequest(
    request_id=str(uuid.uuid4()), resource=resource, owner_id="worker-b", incarnation=1, ttl_ms=10_000),
    metadata=auth(token_b))
seen["b_while_held"] = held["error"]

released = coordinator.Release(coordinator_pb2.ReleaseRequest(
    resource=resource, owner_id="worker-a", incarnation=1, token=a.lease.token), metadata=auth(token_a), timeout=5)
seen["a_released"] = released.released

b = coordinator.Acquire(coordinator_pb2.AcquireRequest(
    request_id=str(uuid.uuid4()), resource=resource, owner_id="worker-b", incarnation=1, ttl_ms=10_000),
    metadata=auth(token_b), timeout=5)
seen["b_token"] = b.lease.token

stale = attempt(sink.Write, sink_pb2.WriteRequest(
    resource=resource, token=a.lease.token, result_id="step-2", payload=b"late A"), metadata=auth(token_a))
seen["a_stale_write"] = stale["error"]

read = sink.Read(sink_pb2.ReadRequest(resource=resource, result_id="step-1"), metadata=auth(token_a), timeout=5)
seen["read_step_1"] = {"payload": read.payload.decode(), "token": read.token}

bad = attempt(sink.Write, sink_pb2.WriteRequest(resource="", token=b.lease.token, result_id="x", payload=b""),
              metadata=auth(token_b))
seen["bad_write"] = bad["error"]

# WriteStream (this project's extension): B's write is applied, A's stale one
# refused on the same stream, each answer naming its write; a refusal's bytes
# are a google.rpc.Status to the stock googleapis classes.
answers = sink.WriteStream(iter([
    sink_pb2.WriteStreamRequest(write=sink_pb2.WriteRequest(
        resource=resource, token=b.lease.token, result_id="streamed-b", payload=b"from B")),
    sink_pb2.WriteStreamRequest(write=sink_pb2.WriteRequest(
        resource=resource, token=a.lease.token, result_id="streamed-a", payload=b"late A")),
]), metadata=auth(token_b), timeout=5)
streamed = {}
for answer in answers:
    if answer.WhichOneof("answer") == "written":
        streamed[answer.result_id] = sink_pb2.WriteResponse.Outcome.Name(answer.written.outcome)
    else:
        status = status_pb2.Status.FromString(answer.refused.SerializeToString())
        streamed[answer.result_id] = {"code": CODE_NAMES[status.code], **status_details(status)}
seen["stream"] = streamed

print(json.dumps(seen))
