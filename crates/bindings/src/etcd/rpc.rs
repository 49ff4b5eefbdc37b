//! The part of etcd's v3 gRPC API the binding calls: KV Range, Put,
//! DeleteRange and Txn, Maintenance Status, Cluster MemberList and Auth
//! Authenticate, over one tonic channel balanced across the members.
//!
//! The messages are declared here with prost's derive, with the field numbers
//! of etcd's `rpc.proto` and `kv.proto` (api/etcdserverpb, api/mvccpb), rather
//! than generated from the .proto files by protoc at build time (what the
//! etcd-client crate does): a machine that builds yardstick then needs no
//! protobuf compiler, and there are no generated files to keep in step. Only
//! the fields the binding reads or sets are declared; protobuf skips the
//! others on decoding. The conformance suite runs every call against a real
//! cluster.
use http::uri::PathAndQuery;
use prost::Message;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tonic::metadata::{Ascii, MetadataValue};
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint};
use tonic::{Code, Status};

#[derive(Clone, PartialEq, Message)]
pub(crate) struct KeyValue {
    #[prost(bytes = "vec", tag = "1")]
    pub key: Vec<u8>,
    #[prost(int64, tag = "2")]
    pub create_revision: i64,
    #[prost(int64, tag = "3")]
    pub mod_revision: i64,
    #[prost(bytes = "vec", tag = "5")]
    pub value: Vec<u8>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct RangeRequest {
    #[prost(bytes = "vec", tag = "1")]
    pub key: Vec<u8>,
    #[prost(bytes = "vec", tag = "2")]
    pub range_end: Vec<u8>,
    #[prost(int64, tag = "3")]
    pub limit: i64,
    #[prost(bool, tag = "7")]
    pub serializable: bool,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct RangeResponse {
    #[prost(message, repeated, tag = "2")]
    pub kvs: Vec<KeyValue>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct PutRequest {
    #[prost(bytes = "vec", tag = "1")]
    pub key: Vec<u8>,
    #[prost(bytes = "vec", tag = "2")]
    pub value: Vec<u8>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct PutResponse {}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct DeleteRangeRequest {
    #[prost(bytes = "vec", tag = "1")]
    pub key: Vec<u8>,
    #[prost(bytes = "vec", tag = "2")]
    pub range_end: Vec<u8>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct DeleteRangeResponse {
    #[prost(int64, tag = "2")]
    pub deleted: i64,
}

/// `Compare.CompareResult`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub(crate) enum CompareOp {
    Equal = 0,
    Greater = 1,
}

/// `Compare.CompareTarget`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub(crate) enum CompareTarget {
    Create = 1,
    Mod = 2,
}

#[derive(Clone, PartialEq, prost::Oneof)]
pub(crate) enum TargetUnion {
    #[prost(int64, tag = "5")]
    CreateRevision(i64),
    #[prost(int64, tag = "6")]
    ModRevision(i64),
}

#[derive(Clone, PartialEq, Message)]
pub(super) struct Compare {
    #[prost(int32, tag = "1")]
    pub result: i32,
    #[prost(int32, tag = "2")]
    pub target: i32,
    #[prost(bytes = "vec", tag = "3")]
    pub key: Vec<u8>,
    #[prost(oneof = "TargetUnion", tags = "5, 6")]
    pub target_union: Option<TargetUnion>,
}

impl Compare {
    /// The key's create revision (0: the key does not exist) compared to `revision`.
    pub(crate) fn create_revision(key: Vec<u8>, op: CompareOp, revision: i64) -> Compare {
        Compare {
            result: op as i32,
            target: CompareTarget::Create as i32,
            key,
            target_union: Some(TargetUnion::CreateRevision(revision)),
        }
    }

    /// The key's last modification revision compared to `revision`.
    pub(crate) fn mod_revision(key: Vec<u8>, op: CompareOp, revision: i64) -> Compare {
        Compare {
            result: op as i32,
            target: CompareTarget::Mod as i32,
            key,
            target_union: Some(TargetUnion::ModRevision(revision)),
        }
    }
}

#[derive(Clone, PartialEq, prost::Oneof)]
pub(super) enum Operation {
    #[prost(message, tag = "2")]
    Put(PutRequest),
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct RequestOp {
    #[prost(oneof = "Operation", tags = "2")]
    pub request: Option<Operation>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct TxnRequest {
    #[prost(message, repeated, tag = "1")]
    pub compare: Vec<Compare>,
    #[prost(message, repeated, tag = "2")]
    pub success: Vec<RequestOp>,
    #[prost(message, repeated, tag = "3")]
    pub failure: Vec<RequestOp>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct TxnResponse {
    #[prost(bool, tag = "2")]
    pub succeeded: bool,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct StatusRequest {}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct StatusResponse {
    #[prost(string, tag = "2")]
    pub version: String,
    #[prost(int64, tag = "3")]
    pub db_size: i64,
    #[prost(uint64, tag = "4")]
    pub leader: u64,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct MemberListRequest {}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct Member {
    #[prost(uint64, tag = "1")]
    pub id: u64,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct MemberListResponse {
    #[prost(message, repeated, tag = "2")]
    pub members: Vec<Member>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct AuthenticateRequest {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub password: String,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct AuthenticateResponse {
    #[prost(string, tag = "2")]
    pub token: String,
}

/// How to reach the cluster: endpoints (`http://host:port` or `https://...`),
/// timeouts, the CA for TLS and the login.
#[derive(Clone, Default)]
pub(crate) struct ConnectOptions {
    pub timeout: Option<Duration>,
    pub connect_timeout: Option<Duration>,
    pub tls_ca_pem: Option<Vec<u8>>,
    pub user: Option<(String, String)>,
}

/// A client over one channel balanced across the endpoints; cheap to clone
/// (clones share the channel and the login token).
#[derive(Clone)]
pub(crate) struct Client {
    grpc: tonic::client::Grpc<Channel>,
    user: Option<Arc<(String, String)>>,
    token: Arc<Mutex<Option<MetadataValue<Ascii>>>>,
}

/// An unreachable member, a refused connection or a broken channel: the
/// transport's own error as an `Unavailable` status.
fn transport(e: impl std::fmt::Display) -> Status {
    Status::unavailable(e.to_string())
}

impl Client {
    /// A client of the cluster at `endpoints`; logs in when a user is given.
    /// Members are connected to on the first call (the open's status call
    /// tells whether any answers).
    pub(super) async fn connect(endpoints: &[String], options: &ConnectOptions) -> Result<Client, Status> {
        let mut list = Vec::with_capacity(endpoints.len());
        for e in endpoints {
            let mut endpoint = Endpoint::from_shared(e.clone())
                .map_err(|err| Status::invalid_argument(format!("endpoint {e}: {err}")))?;
            if let Some(t) = options.timeout {
                endpoint = endpoint.timeout(t);
            }
            if let Some(t) = options.connect_timeout {
                endpoint = endpoint.connect_timeout(t);
            }
            if let Some(pem) = &options.tls_ca_pem {
                endpoint = endpoint
                    .tls_config(ClientTlsConfig::new().ca_certificate(Certificate::from_pem(pem)))
                    .map_err(|err| Status::invalid_argument(format!("TLS for {e}: {err}")))?;
            }
            list.push(endpoint);
        }
        let mut client = Client {
            grpc: tonic::client::Grpc::new(Channel::balance_list(list.into_iter())),
            user: options.user.clone().map(Arc::new),
            token: Arc::new(Mutex::new(None)),
        };
        if client.user.is_some() {
            client.authenticate().await?;
        }
        Ok(client)
    }

    async fn authenticate(&mut self) -> Result<(), Status> {
        let Some(user) = self.user.clone() else {
            return Ok(());
        };
        let request = AuthenticateRequest {
            name: user.0.clone(),
            password: user.1.clone(),
        };
        // the login goes without the old token: etcd refuses any request
        // carrying one it no longer knows, the login included
        *self.token.lock().unwrap_or_else(|p| p.into_inner()) = None;
        let r: AuthenticateResponse = self
            .send("/etcdserverpb.Auth/Authenticate", request)
            .await?;
        let token = MetadataValue::try_from(r.token.as_str())
            .map_err(|e| Status::internal(format!("etcd sent an unusable auth token: {e}")))?;
        *self.token.lock().unwrap_or_else(|p| p.into_inner()) = Some(token);
        Ok(())
    }

    async fn send<Q, R>(&mut self, path: &'static str, message: Q) -> Result<R, Status>
    where
        Q: Message + Send + Sync + 'static,
        R: Message + Default + Send + Sync + 'static,
    {
        let mut request = tonic::Request::new(message);
        // without a login there is no token: no lock on the per-operation path
        if self.user.is_some() {
            let token = self.token.lock().unwrap_or_else(|p| p.into_inner()).clone();
            if let Some(t) = token {
                request.metadata_mut().insert("token", t);
            }
        }
        self.grpc.ready().await.map_err(transport)?;
        let codec = tonic_prost::ProstCodec::<Q, R>::default();
        let r = self
            .grpc
            .unary(request, PathAndQuery::from_static(path), codec)
            .await?;
        Ok(r.into_inner())
    }

    /// One call; with a login, an expired token is renewed and the call sent again.
    async fn call<Q, R>(&mut self, path: &'static str, message: Q) -> Result<R, Status>
    where
        Q: Message + Clone + Send + Sync + 'static,
        R: Message + Default + Send + Sync + 'static,
    {
        if self.user.is_none() {
            return self.send(path, message).await;
        }
        match self.send(path, message.clone()).await {
            Err(s)
                if s.code() == Code::Unauthenticated
                    || s.message().contains("invalid auth token") =>
            {
                self.authenticate().await?;
                self.send(path, message).await
            }
            other => other,
        }
    }

    pub(super) async fn range(&mut self, r: RangeRequest) -> Result<RangeResponse, Status> {
        self.call("/etcdserverpb.KV/Range", r).await
    }

    pub(super) async fn put(&mut self, key: Vec<u8>, value: Vec<u8>) -> Result<PutResponse, Status> {
        self.call("/etcdserverpb.KV/Put", PutRequest { key, value })
            .await
    }

    pub(super) async fn delete(
        &mut self,
        key: Vec<u8>,
        range_end: Vec<u8>,
    ) -> Result<DeleteRangeResponse, Status> {
        self.call(
            "/etcdserverpb.KV/DeleteRange",
            DeleteRangeRequest { key, range_end },
        )
        .await
    }

    /// Puts `value` at `key` when every comparison holds; whether it did.
    pub(crate) async fn put_if(
        &mut self,
        compare: Vec<Compare>,
        key: Vec<u8>,
        value: Vec<u8>,
    ) -> Result<bool, Status> {
        let txn = TxnRequest {
            compare,
            success: vec![RequestOp {
                request: Some(Operation::Put(PutRequest { key, value })),
            }],
            failure: Vec::new(),
        };
        let r: TxnResponse = self.call("/etcdserverpb.KV/Txn", txn).await?;
        Ok(r.succeeded)
    }

    pub(super) async fn status(&mut self) -> Result<StatusResponse, Status> {
        self.call("/etcdserverpb.Maintenance/Status", StatusRequest {})
            .await
    }

    pub(crate) async fn member_list(&mut self) -> Result<MemberListResponse, Status> {
        self.call("/etcdserverpb.Cluster/MemberList", MemberListRequest {})
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes as etcd's Go code (gogo/protobuf) encodes these messages: each
    /// field's tag is (number << 3) | wire type, as rpc.proto numbers them.
    #[test]
    fn messages_encode_with_the_field_numbers_of_rpc_proto() {
        let r = RangeRequest {
            key: b"a".to_vec(),
            range_end: b"b".to_vec(),
            limit: 5,
            serializable: true,
        };
        // key=1 (bytes), range_end=2 (bytes), limit=3 (varint), serializable=7 (varint)
        assert_eq!(
            r.encode_to_vec(),
            [0x0a, 1, b'a', 0x12, 1, b'b', 0x18, 5, 0x38, 1]
        );
        let c = Compare::create_revision(b"k".to_vec(), CompareOp::Equal, 0);
        // result=1 EQUAL (0, the default, is not written), target=2 CREATE (1),
        // key=3, create_revision=5: a oneof member is written even when 0
        assert_eq!(c.encode_to_vec(), [0x10, 1, 0x1a, 1, b'k', 0x28, 0]);
        let c = Compare::mod_revision(b"k".to_vec(), CompareOp::Greater, 7);
        assert_eq!(
            c.encode_to_vec(),
            [0x08, 1, 0x10, 2, 0x1a, 1, b'k', 0x30, 7]
        );
        let txn = TxnRequest {
            compare: vec![],
            success: vec![RequestOp {
                request: Some(Operation::Put(PutRequest {
                    key: b"k".to_vec(),
                    value: b"v".to_vec(),
                })),
            }],
            failure: vec![],
        };
        // success=2 holding RequestOp{request_put=2 holding PutRequest{key=1, value=2}}
        assert_eq!(
            txn.encode_to_vec(),
            [0x12, 8, 0x12, 6, 0x0a, 1, b'k', 0x12, 1, b'v']
        );
    }

    #[test]
    fn responses_decode_their_fields_and_skip_the_rest() {
        // RangeResponse{header=1{revision=3: 9}, kvs=2{key=1 "k", create_revision=2: 4,
        // mod_revision=3: 6, version=4: 1, value=5 "v"}, count=4: 1}
        let bytes = [
            0x0a, 2, 0x18, 9, 0x12, 12, 0x0a, 1, b'k', 0x10, 4, 0x18, 6, 0x20, 1, 0x2a, 1, b'v',
            0x20, 1,
        ];
        let r = RangeResponse::decode(&bytes[..]).unwrap();
        assert_eq!(
            r.kvs,
            [KeyValue {
                key: b"k".to_vec(),
                create_revision: 4,
                mod_revision: 6,
                value: b"v".to_vec(),
            }]
        );
        // StatusResponse{version=2 "3.4", dbSize=3: 20, leader=4: 0x2a}
        let s =
            StatusResponse::decode(&[0x12, 3, b'3', b'.', b'4', 0x18, 20, 0x20, 0x2a][..]).unwrap();
        assert_eq!((s.version.as_str(), s.db_size, s.leader), ("3.4", 20, 0x2a));
    }
}
