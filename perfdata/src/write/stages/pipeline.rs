//! A stage and a chain of them: what every conversion is built from.

use crate::generated::perf_data::Ctx;
use crate::rt::Error;
use crate::write::model::{Builder, RecordItem};

/// Where a stage sends its records.
pub type Emit<'e> = dyn FnMut(RecordItem<'_>) -> Result<(), Error> + 'e;

/// One conversion step.
pub trait Stage {
    /// Before any record: adjusts the header part (`head`: the file without its records;
    /// raw bytes in `head.endian`). `fctx` holds the CPU counts (NRCPUS).
    fn begin(&mut self, head: &mut Builder<'_>, fctx: Ctx) -> Result<(), Error> {
        let _ = (head, fctx);
        Ok(())
    }
    /// Takes one record, emits zero or more.
    fn push(&mut self, item: RecordItem<'_>, out: &mut Emit<'_>) -> Result<(), Error>;
    /// After the last record: emits what is still held and sets what the stream taught
    /// about the header (features, attrs).
    fn finish(&mut self, head: &mut Builder<'_>, out: &mut Emit<'_>) -> Result<(), Error> {
        let _ = (head, out);
        Ok(())
    }
}

/// Stages run in order; the last one emits into the caller's sink.
#[derive(Default)]
pub struct Pipeline<'s> {
    stages: Vec<Box<dyn Stage + 's>>,
}

impl<'s> Pipeline<'s> {
    /// Adds `stage` after the others: it receives what they emit.
    pub fn push_stage(&mut self, stage: impl Stage + 's) {
        self.stages.push(Box::new(stage));
    }

    /// True with no stage: records go to the sink as they are.
    pub fn is_empty(&self) -> bool {
        self.stages.is_empty()
    }

    /// Runs every stage's [`Stage::begin`] in order on `head`, so that each sees the
    /// header as the stages before it left it (the layout a relayout set, the byte order
    /// a byte-order change set).
    pub fn begin(&mut self, head: &mut Builder<'_>, fctx: Ctx) -> Result<(), Error> {
        for s in &mut self.stages {
            s.begin(head, fctx)?;
        }
        Ok(())
    }

    /// Passes one record through the stages in order; what the last one emits goes to
    /// `sink`.
    pub fn push(&mut self, item: RecordItem<'_>, sink: &mut Emit<'_>) -> Result<(), Error> {
        run(&mut self.stages, item, sink)
    }

    /// Finishes every stage in order: what one flushes still goes through the next ones.
    pub fn finish(&mut self, head: &mut Builder<'_>, sink: &mut Emit<'_>) -> Result<(), Error> {
        for i in 0..self.stages.len() {
            let (done, rest) = self.stages.split_at_mut(i + 1);
            done[i].finish(head, &mut |it| run(rest, it, sink))?;
        }
        Ok(())
    }
}

fn run(
    stages: &mut [Box<dyn Stage + '_>],
    item: RecordItem<'_>,
    sink: &mut Emit<'_>,
) -> Result<(), Error> {
    match stages.split_first_mut() {
        None => sink(item),
        Some((first, rest)) => first.push(item, &mut |it| run(rest, it, sink)),
    }
}

/// Runs `stage` over the records of a model, in place.
pub fn run_on_model(file: &mut Builder<'_>, stage: impl Stage) -> Result<(), Error> {
    let fctx = file.feature_ctx();
    let records = std::mem::take(&mut file.records);
    let mut pipeline = Pipeline::default();
    pipeline.push_stage(stage);
    pipeline.begin(file, fctx)?;
    let mut out: Vec<RecordItem<'static>> = Vec::with_capacity(records.len());
    let mut keep = |it: RecordItem<'_>| {
        out.push(it.into_owned());
        Ok(())
    };
    for (i, item) in records.into_iter().enumerate() {
        let ty = item.ty;
        pipeline
            .push(item, &mut keep)
            .map_err(|e| e.with_record(i as u64, ty.label()))?;
    }
    pipeline.finish(file, &mut keep)?;
    file.records = out;
    Ok(())
}
