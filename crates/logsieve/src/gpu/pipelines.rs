//! Compute pipelines and their bind-group layouts, built once per context
//! (wgpu's `repeated_compute` habit): compiling is milliseconds, a query is
//! a tenth of one.
//!
//! Two layouts: the engine's (bindings 0..=9 of `common.wgsl`, one bind
//! group per segment whatever kernel runs) and the many-literal kernels'
//! (the segment's bytes, line offsets and result bits, plus the pattern
//! tables, the per-pattern counters and a small uniform:
//! `multi_common.wgsl`).

use super::kernels;

/// The storage buffers the kernels bind at once.
pub(crate) const STORAGE_BUFFERS: u32 = 8;

/// The engine's bind-group layout and compiled pipelines.
pub(crate) struct Pipelines {
    /// The layout of every segment's bind group (`common.wgsl`).
    pub(crate) layout: wgpu::BindGroupLayout,
    pub(crate) brute_line: wgpu::ComputePipeline,
    pub(crate) brute_byte: wgpu::ComputePipeline,
    pub(crate) two_phase_p1: wgpu::ComputePipeline,
    pub(crate) two_phase_p2: wgpu::ComputePipeline,
    /// `scan`'s pipelines, built when first needed.
    pub(crate) scan: ScanPipes,
    /// `scan`'s class-string pipelines (`CLS`, the uniform's module), built
    /// when first needed.
    pub(crate) scan_classes: ClassScanPipes,
    pub(crate) sig_build: wgpu::ComputePipeline,
    pub(crate) sig_p1: wgpu::ComputePipeline,
    pub(crate) plain_read: wgpu::ComputePipeline,
    pub(crate) count_result: wgpu::ComputePipeline,
    pub(crate) count_cand: wgpu::ComputePipeline,
    pub(crate) count_result_zero: wgpu::ComputePipeline,
}

/// `scan`'s pipelines ([`kernels::scan::pipeline_for`]), each built the
/// first time a query needs it (one compile is under a millisecond on the
/// H100; 65 at start-up would be about 55 ms).
pub(crate) struct ScanPipes {
    module: wgpu::ShaderModule,
    layout: wgpu::PipelineLayout,
    pipes: [std::sync::OnceLock<wgpu::ComputePipeline>; kernels::scan::PIPELINES],
}

impl ScanPipes {
    /// Pipeline `i`, compiled on first use.
    pub(crate) fn get(&self, device: &wgpu::Device, i: usize) -> &wgpu::ComputePipeline {
        self.pipes[i].get_or_init(|| {
            compute_pipeline(
                device,
                &self.layout,
                &self.module,
                "scan",
                &kernels::scan::constants(i),
            )
        })
    }
}

/// `scan`'s class-string pipelines ([`kernels::scan::class_pipeline_of`]):
/// the module that reads the uniform (natively the other pipelines read
/// immediates, which have no room for the classes), compiled with the
/// first of them.
pub(crate) struct ClassScanPipes {
    module: std::sync::OnceLock<wgpu::ShaderModule>,
    layout: wgpu::PipelineLayout,
    /// [`kernels::scan::CLASS_PIPELINES`] slots, on the heap (thousands).
    pipes: Box<[std::sync::OnceLock<wgpu::ComputePipeline>]>,
}

impl ClassScanPipes {
    /// Pipeline `i`, compiled on first use.
    pub(crate) fn get(&self, device: &wgpu::Device, i: usize) -> &wgpu::ComputePipeline {
        self.pipes[i].get_or_init(|| {
            let module = self.module.get_or_init(|| {
                device.create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some("scan (class strings)"),
                    source: wgpu::ShaderSource::Wgsl(kernels::scan::MODULE.source().into()),
                })
            });
            compute_pipeline(
                device,
                &self.layout,
                module,
                "scan",
                &kernels::scan::class_constants(i),
            )
        })
    }
}

/// A compute pipeline of `entry` in `module`, with override `constants`.
pub(crate) fn compute_pipeline(
    device: &wgpu::Device,
    layout: &wgpu::PipelineLayout,
    module: &wgpu::ShaderModule,
    entry: &str,
    constants: &[(&str, f64)],
) -> wgpu::ComputePipeline {
    device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(entry),
        layout: Some(layout),
        module,
        entry_point: Some(entry),
        compilation_options: wgpu::PipelineCompilationOptions {
            constants,
            ..Default::default()
        },
        cache: None,
    })
}

/// A compute-stage buffer binding of a bind-group layout (every layout
/// here: the engine's, the many-literal kernels' and the stats pipeline's).
pub(crate) fn buffer_entry(
    binding: u32,
    ty: wgpu::BufferBindingType,
) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty,
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

/// Bindings 0..=9, as `common.wgsl` declares them.
fn layout_entries() -> Vec<wgpu::BindGroupLayoutEntry> {
    let entry = buffer_entry;
    let storage = |read_only| wgpu::BufferBindingType::Storage { read_only };
    vec![
        entry(0, wgpu::BufferBindingType::Uniform),
        entry(1, wgpu::BufferBindingType::Uniform),
        entry(2, storage(true)),
        entry(3, storage(true)),
        entry(4, storage(true)),
        entry(5, storage(false)),
        entry(6, storage(false)),
        entry(7, storage(false)),
        entry(8, storage(false)),
        entry(9, storage(false)),
    ]
}

impl Pipelines {
    /// Compiles the engine's pipelines (`scan`'s lazily), with `scan`
    /// reading its parameters as immediate data when `immediates`. The
    /// caller holds a validation error scope around it.
    pub(crate) fn build(device: &wgpu::Device, immediates: bool) -> Pipelines {
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("logsieve"),
            entries: &layout_entries(),
        });
        let pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("logsieve"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: if immediates {
                kernels::scan::IMM_SIZE
            } else {
                0
            },
        });
        let module = |m: &kernels::Module| {
            device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(m.label),
                source: wgpu::ShaderSource::Wgsl(m.source().into()),
            })
        };
        let pipe = |module: &wgpu::ShaderModule, entry: &str| {
            compute_pipeline(device, &pl, module, entry, &[])
        };
        let m_bl = module(&kernels::brute_line::MODULE);
        let m_bb = module(&kernels::brute_byte::MODULE);
        let m_tp = module(&kernels::two_phase::MODULE);
        let m_sc = match immediates {
            true => device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("scan (immediates)"),
                source: wgpu::ShaderSource::Wgsl(kernels::scan::source_immediate().into()),
            }),
            false => module(&kernels::scan::MODULE),
        };
        let m_sg = module(&kernels::signature::MODULE);
        let m_pr = module(&kernels::plain_read::MODULE);
        let m_ct = module(&kernels::count::MODULE);
        Pipelines {
            brute_line: pipe(&m_bl, "brute_line"),
            brute_byte: pipe(&m_bb, "brute_byte"),
            two_phase_p1: pipe(&m_tp, "phase1"),
            two_phase_p2: pipe(&m_tp, "phase2"),
            scan: ScanPipes {
                module: m_sc,
                layout: pl.clone(),
                pipes: std::array::from_fn(|_| std::sync::OnceLock::new()),
            },
            scan_classes: ClassScanPipes {
                module: std::sync::OnceLock::new(),
                layout: pl.clone(),
                pipes: (0..kernels::scan::CLASS_PIPELINES)
                    .map(|_| std::sync::OnceLock::new())
                    .collect(),
            },
            sig_build: pipe(&m_sg, "build"),
            sig_p1: pipe(&m_sg, "phase1"),
            plain_read: pipe(&m_pr, "plain_read"),
            count_result: pipe(&m_ct, "count_result"),
            count_cand: pipe(&m_ct, "count_cand"),
            count_result_zero: pipe(&m_ct, "count_result_zero"),
            layout,
        }
    }
}

/// The many-literal kernels' layout and pipelines (`trie`, `ac`,
/// `prefix-hash`, `bloom`, in the order of [`super::MultiKernel`]'s
/// variants).
pub(crate) struct LiteralSetPipes {
    /// The layout of their bind groups (`multi_common.wgsl`).
    pub(crate) layout: wgpu::BindGroupLayout,
    pipes: Vec<wgpu::ComputePipeline>,
    /// `bloom` for filters in parts (`SPLIT`), built when the context's
    /// tuning asks for parts (the only way tables get them).
    bloom_split: Option<wgpu::ComputePipeline>,
    /// Words of the bloom pipeline's filter.
    pub(crate) bloom_words: u32,
    /// `list_patterns` (`kernels/pattern_list.wgsl`) and its layout: the
    /// counters, the list, its uniform.
    pub(crate) list: wgpu::ComputePipeline,
    pub(crate) list_layout: wgpu::BindGroupLayout,
}

impl LiteralSetPipes {
    /// The pipeline of `k`.
    pub(crate) fn pipe(&self, k: super::MultiKernel) -> &wgpu::ComputePipeline {
        &self.pipes[k as usize]
    }

    /// The `bloom` pipeline for tables of `parts` parts (`None`: more than
    /// one and no split pipeline was built).
    pub(crate) fn bloom(&self, parts: u32) -> Option<&wgpu::ComputePipeline> {
        match parts {
            0 | 1 => Some(self.pipe(super::MultiKernel::Bloom)),
            _ => self.bloom_split.as_ref(),
        }
    }

    /// Compiles them for a device allowing `workgroup_storage` bytes of
    /// workgroup memory (the size of `bloom`'s filter), `bloom` with the
    /// constants of the diagnostic switch `bloom_diag`, and when `split`
    /// also for filters in parts. The caller holds a validation error
    /// scope around it.
    pub(crate) fn build(
        dev: &wgpu::Device,
        workgroup_storage: u32,
        bloom_diag: u32,
        split: bool,
    ) -> LiteralSetPipes {
        let entry = buffer_entry;
        let storage = |read_only| wgpu::BufferBindingType::Storage { read_only };
        let uniform = wgpu::BufferBindingType::Uniform;
        let layout = dev.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("multi"),
            entries: &[
                entry(1, uniform),
                entry(2, storage(true)),
                entry(3, storage(true)),
                entry(4, storage(true)),
                entry(6, storage(false)),
                entry(10, storage(true)),
                entry(11, storage(false)),
                entry(12, uniform),
            ],
        });
        let pl = dev.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("multi"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let mut pipes = Vec::new();
        let mut bloom_split = None;
        let bloom_words = kernels::bloom::filter_words(workgroup_storage);
        // In the order of MultiKernel's variants (`pipe` indexes by them).
        for (m, entry) in [
            (&kernels::trie::MODULE, "trie"),
            (&kernels::ac::MODULE, "ac"),
            (&kernels::prefix_hash::MODULE, "prefix_hash"),
            (&kernels::bloom::MODULE, "bloom"),
        ] {
            let source = if entry == "bloom" {
                kernels::bloom::source(bloom_words)
            } else {
                m.source()
            };
            let module = dev.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(m.label),
                source: wgpu::ShaderSource::Wgsl(source.into()),
            });
            if entry == "bloom" {
                let c = kernels::bloom::constants(bloom_diag, false);
                pipes.push(compute_pipeline(dev, &pl, &module, entry, &c));
                if split {
                    let c = kernels::bloom::constants(bloom_diag, true);
                    bloom_split = Some(compute_pipeline(dev, &pl, &module, entry, &c));
                }
            } else {
                pipes.push(compute_pipeline(dev, &pl, &module, entry, &[]));
            }
        }
        let list_layout = dev.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("pattern list"),
            entries: &[
                entry(11, storage(true)),
                entry(13, storage(false)),
                entry(14, uniform),
            ],
        });
        let list_pl = dev.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("pattern list"),
            bind_group_layouts: &[Some(&list_layout)],
            immediate_size: 0,
        });
        let m = &kernels::pattern_list::MODULE;
        let module = dev.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(m.label),
            source: wgpu::ShaderSource::Wgsl(m.source().into()),
        });
        let list = compute_pipeline(dev, &list_pl, &module, "list_patterns", &[]);
        LiteralSetPipes {
            layout,
            pipes,
            bloom_split,
            bloom_words,
            list,
            list_layout,
        }
    }
}
