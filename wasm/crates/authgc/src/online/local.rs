//! All parties of an authenticated-garbling session in one process, over the in-memory network:
//! what the native and in-Wasm benchmarks time phase by phase, and what single-process runs use.
//! Every call runs all parties' futures on the current thread ([`run_local`]), so a phase's time
//! is the sum of every party's work.

use super::{AuthGcParty, ClientMasks, ClientMessage, Options, Outputs, PreparedCircuit, Roles, SharedChannel};
#[cfg(feature = "ideal")]
use crate::ideal::IdealPreprocessor;
use crate::preprocess::Preprocessor;
use crate::AuthGcError;
use core::future::Future;
use futures::future::try_join_all;
use webmpc_core::channel::memory::{network, run_local, MemoryChannel};
#[cfg(feature = "ideal")]
use webmpc_core::channel::Channel;
use webmpc_core::channel::ChannelError;

/// The channel each local party talks through.
pub type LocalChannel = SharedChannel<MemoryChannel>;

/// n parties with their preprocessors set up.
pub struct LocalAuthGc<P> {
    parties: Vec<AuthGcParty<P, LocalChannel>>,
}

fn stalled() -> AuthGcError {
    AuthGcError::Channel(ChannelError::Transport { peer: 0, reason: "local parties deadlocked".into() })
}

/// Runs one future per party to completion; the first failure wins (the others are dropped).
fn all<T, F: Future<Output = Result<T, AuthGcError>>>(futures: impl IntoIterator<Item = F>) -> Result<Vec<T>, AuthGcError> {
    run_local(try_join_all(futures)).map_err(|_| stalled())?
}

#[cfg(feature = "ideal")]
impl LocalAuthGc<IdealPreprocessor> {
    /// `parties` parties over the trusted-dealer F_Pre (a fresh random dealer seed and session);
    /// feature `ideal` only.
    pub fn ideal(parties: usize, options: Options) -> Result<Self, AuthGcError> {
        let mut seed = [0u8; 32];
        webmpc_core::random::fill(&mut seed)?;
        Self::setup(parties, options, move |ch: LocalChannel| {
            let (me, n) = (ch.party(), ch.parties());
            async move { IdealPreprocessor::new(seed, me, n) }
        })
    }
}

impl<P: Preprocessor> LocalAuthGc<P> {
    /// Sets up `parties` parties; `make(channel)` builds each party's preprocessor (the setup
    /// phase: base OTs for a real F_Pre), all concurrently.
    pub fn setup<F, Fut>(parties: usize, options: Options, make: F) -> Result<Self, AuthGcError>
    where
        F: Fn(LocalChannel) -> Fut,
        Fut: Future<Output = Result<P, AuthGcError>>,
    {
        let mut session = [0u8; 32];
        webmpc_core::random::fill(&mut session)?;
        let channels: Vec<LocalChannel> = network(parties).into_iter().map(SharedChannel::new).collect();
        let pres = all(channels.iter().map(|ch| make(ch.clone())))?;
        let parties = pres
            .into_iter()
            .zip(channels)
            .map(|(pre, ch)| AuthGcParty::new(pre, ch, session, options))
            .collect::<Result<_, _>>()?;
        Ok(LocalAuthGc { parties })
    }

    /// The parties.
    pub fn parties(&self) -> &[AuthGcParty<P, LocalChannel>] {
        &self.parties
    }

    /// Bytes each party has sent so far.
    pub fn bytes_sent(&self) -> Vec<u64> {
        self.parties.iter().map(|p| p.channel().inner().sent_bytes()).collect()
    }

    /// Function-independent preprocessing at every party.
    pub fn preprocess(&mut self, and_gates: usize, masks: usize) -> Result<(), AuthGcError> {
        all(self.parties.iter_mut().map(|p| p.preprocess(and_gates, masks, |_, _, _| {}))).map(drop)
    }

    /// Function-dependent preprocessing of `circuit` at every party.
    pub fn prepare(&mut self, circuit: &PreparedCircuit, roles: &Roles) -> Result<(), AuthGcError> {
        all(self.parties.iter_mut().map(|p| p.prepare(circuit, roles, |_, _, _| {}))).map(drop)
    }

    /// Runs `circuit`; `inputs[p]` are party p's input values. Returns every party's outputs.
    pub fn run(
        &mut self,
        circuit: &PreparedCircuit,
        roles: &Roles,
        inputs: &[Vec<Vec<bool>>],
    ) -> Result<Vec<Outputs>, AuthGcError> {
        if inputs.len() != self.parties.len() {
            return Err(AuthGcError::InvalidArgument("one list of input values per party".into()));
        }
        all(self.parties.iter_mut().zip(inputs).map(|(p, x)| async move {
            let mut source = circuit.source();
            p.run(&mut source, roles, x, |_, _, _| {}).await
        }))
    }

    /// Every party's [`client_mask_shares`](AuthGcParty::client_mask_shares) of client input
    /// value `value` of the prepared circuit, in party order.
    pub fn client_mask_shares(&self, value: usize) -> Result<Vec<Vec<u8>>, AuthGcError> {
        self.parties.iter().map(|p| p.client_mask_shares(value)).collect()
    }

    /// Plays every client of the prepared circuit: client value k (`values[k]`, `None` for a
    /// client that does not come) takes every party's mask shares and makes its message.
    pub fn clients_give(&self, values: &[Option<Vec<bool>>]) -> Result<Vec<Option<ClientMessage>>, AuthGcError> {
        values
            .iter()
            .enumerate()
            .map(|(k, v)| {
                let Some(v) = v else { return Ok(None) };
                let shares = self.client_mask_shares(k)?;
                let views: Vec<&[u8]> = shares.iter().map(Vec::as_slice).collect();
                ClientMasks::combine(v.len(), &views)?.message(v).map(Some)
            })
            .collect()
    }

    /// [`run_with_clients`](AuthGcParty::run_with_clients) at every party with the same client
    /// messages. Returns every party's outputs and refused clients.
    pub fn run_with_clients(
        &mut self,
        circuit: &PreparedCircuit,
        roles: &Roles,
        inputs: &[Vec<Vec<bool>>],
        clients: &[Option<ClientMessage>],
    ) -> Result<Vec<(Outputs, Vec<usize>)>, AuthGcError> {
        if inputs.len() != self.parties.len() {
            return Err(AuthGcError::InvalidArgument("one list of input values per party".into()));
        }
        all(self.parties.iter_mut().zip(inputs).map(|(p, x)| async move {
            let mut source = circuit.source();
            p.run_with_clients(&mut source, roles, x, clients, |_, _, _| {}).await
        }))
    }
}
