"""The field names of ``transformers.TrainingArguments`` (transformers 5.23.0), kept here so
that validating a configuration never imports transformers. ``tests/config`` compares this
list with the installed ``dataclasses.fields(TrainingArguments)``; after an upgrade,
regenerate it from ``" ".join(f.name for f in dataclasses.fields(TrainingArguments))``.
"""

from __future__ import annotations

#: The transformers version the list was read from.
TRANSFORMERS_VERSION = "5.23.0"

#: ``dataclasses.fields(TrainingArguments)``, in declaration order.
TRAINING_ARGUMENTS: tuple[str, ...] = tuple(
    """
    output_dir per_device_train_batch_size num_train_epochs max_steps learning_rate
    lr_scheduler_type lr_scheduler_kwargs warmup_steps optim optim_args weight_decay
    adam_beta1 adam_beta2 adam_epsilon optim_target_modules gradient_accumulation_steps
    average_tokens_across_devices max_grad_norm label_smoothing_factor bf16 fp16
    bf16_full_eval fp16_full_eval tf32 activation_checkpointing
    activation_checkpointing_kwargs gradient_checkpointing gradient_checkpointing_kwargs
    torch_compile torch_compile_backend torch_compile_mode use_liger_kernel
    liger_kernel_config use_cache neftune_noise_alpha torch_empty_cache_steps
    auto_find_batch_size logging_strategy logging_steps logging_first_step log_on_each_node
    logging_nan_inf_filter include_num_input_tokens_seen log_level log_level_replica
    disable_tqdm report_to run_name project trackio_space_id trackio_bucket_id
    trackio_static_space_id eval_strategy eval_steps eval_delay per_device_eval_batch_size
    prediction_loss_only eval_on_start eval_do_concat_batches eval_use_gather_object
    eval_accumulation_steps include_for_metrics batch_eval_metrics save_only_model
    save_strategy save_steps save_on_each_node save_total_limit enable_jit_checkpoint
    push_to_hub hub_token hub_private_repo hub_model_id hub_strategy hub_always_push
    hub_revision load_best_model_at_end metric_for_best_model greater_is_better
    ignore_data_skip restore_callback_states_from_checkpoint full_determinism seed data_seed
    use_cpu accelerator_config parallelism_config dataloader_drop_last
    dataloader_num_workers dataloader_pin_memory dataloader_persistent_workers
    dataloader_prefetch_factor dataloader_multiprocessing_context dataloader_in_order
    remove_unused_columns label_names train_sampling_strategy length_column_name
    ddp_find_unused_parameters ddp_bucket_cap_mb ddp_broadcast_buffers ddp_static_graph
    ddp_backend ddp_timeout fsdp fsdp_config deepspeed debug skip_memory_metrics do_train
    do_eval do_predict resume_from_checkpoint local_rank
    """.split()
)
