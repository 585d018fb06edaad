//! Every party of a MASCOT session in one process over the in-memory network: what the native
//! and in-Wasm benchmarks measure and what tests drive.

use crate::error::SpdzError;
use crate::field::Field;
use crate::party::Party;
use crate::program::Program;
use futures::future::join_all;
use webmpc_core::channel::memory::{network, run_local, MemoryChannel};
use webmpc_core::channel::ChannelError;
use webmpc_ot::SessionId;

/// n parties with their sessions set up.
pub struct Local<F: Field> {
    parties: Vec<Party<F, MemoryChannel>>,
}

fn stalled() -> SpdzError {
    SpdzError::Channel(ChannelError::Transport { peer: 0, reason: "local parties deadlocked".into() })
}

/// Runs one future per party to completion, in this thread.
pub fn run_all<T, Fut: core::future::Future<Output = Result<T, SpdzError>>>(
    futs: Vec<Fut>,
) -> Result<Vec<T>, SpdzError> {
    run_local(join_all(futs)).map_err(|_| stalled())?.into_iter().collect()
}

impl<F: Field> Local<F> {
    /// Sets up `n` parties (base OTs and COPE initialisation for every pair).
    pub fn setup(n: usize) -> Result<Local<F>, SpdzError> {
        let sid = SessionId::random()?;
        let sid = &sid;
        let parties = run_all(network(n).into_iter().map(|ch| Party::setup(ch, sid)).collect())?;
        Ok(Local { parties })
    }

    /// The parties.
    pub fn parties(&mut self) -> &mut [Party<F, MemoryChannel>] {
        &mut self.parties
    }

    /// Total bytes sent by all parties.
    pub fn bytes_sent(&self) -> u64 {
        self.parties.iter().map(|p| p.channel().sent_bytes()).sum()
    }

    /// Sets every party's batch size.
    pub fn set_batch(&mut self, b: usize) -> Result<(), SpdzError> {
        self.parties.iter_mut().try_for_each(|p| p.set_batch(b))
    }

    /// Generates `n` triples on every party and drops them (throughput measurement); returns how
    /// many each party got.
    pub fn generate_triples(&mut self, n: usize) -> Result<usize, SpdzError> {
        let counts = run_all(
            self.parties
                .iter_mut()
                .map(|p| async move {
                    let mut got = 0;
                    p.generate_triples(n, |t| got += t.len(), |_, _| {}).await?;
                    Ok(got)
                })
                .collect(),
        )?;
        Ok(counts[0])
    }

    /// Generates `n` random bits on every party (into their stores).
    pub fn preprocess_bits(&mut self, n: usize) -> Result<(), SpdzError> {
        run_all(self.parties.iter_mut().map(|p| p.preprocess_bits(n, |_, _| {})).collect())?;
        Ok(())
    }

    /// Adds `n` triples to every party's store.
    pub fn preprocess_triples(&mut self, n: usize) -> Result<(), SpdzError> {
        run_all(self.parties.iter_mut().map(|p| p.preprocess_triples(n, |_, _| {})).collect())?;
        Ok(())
    }

    /// Runs `program`; `inputs[i]` are party i's inputs. Returns every party's outputs.
    #[allow(clippy::type_complexity)]
    pub fn run(
        &mut self,
        program: &Program,
        inputs: &[Vec<[u8; 16]>],
    ) -> Result<Vec<Vec<Option<[u8; 16]>>>, SpdzError> {
        run_all(self.parties.iter_mut().zip(inputs).map(|(p, i)| p.run(program, i, |_, _| {})).collect())
    }
}
