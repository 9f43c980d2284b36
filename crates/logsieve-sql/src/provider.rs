//! The DataFusion methods every `logs` table and scan of ours has in
//! common, written once: the local table ([`crate::table::LogsTable`],
//! [`crate::table::LogScanExec`]) and the cluster's
//! (`logsieve-cluster`'s `ClusterTable` and `ShardScanExec`) expand them.

/// In an `impl TableProvider` for a struct with `shape: Shape` and
/// `pushdown: bool`: its schema, a base table, and the filters
/// [`crate::table::Shape::pushdown`] takes (the one pushdown decision).
#[macro_export]
macro_rules! logs_table_methods {
    () => {
        fn schema(&self) -> ::datafusion::arrow::datatypes::SchemaRef {
            self.shape.schema()
        }

        fn table_type(&self) -> ::datafusion::logical_expr::TableType {
            ::datafusion::logical_expr::TableType::Base
        }

        fn supports_filters_pushdown(
            &self,
            filters: &[&::datafusion::logical_expr::Expr],
        ) -> ::datafusion::common::Result<
            ::std::vec::Vec<::datafusion::logical_expr::TableProviderFilterPushDown>,
        > {
            Ok(self.shape.pushdown(filters, self.pushdown))
        }
    };
}

/// In an `impl ExecutionPlan` for a leaf scan with `props:
/// Arc<PlanProperties>`: its name, its properties, no children and no
/// expressions.
#[macro_export]
macro_rules! leaf_scan_methods {
    ($name:literal) => {
        fn name(&self) -> &str {
            $name
        }

        fn properties(&self) -> &::std::sync::Arc<::datafusion::physical_plan::PlanProperties> {
            &self.props
        }

        fn children(
            &self,
        ) -> ::std::vec::Vec<&::std::sync::Arc<dyn ::datafusion::physical_plan::ExecutionPlan>> {
            ::std::vec::Vec::new()
        }

        fn apply_expressions(
            &self,
            _f: &mut dyn FnMut(
                &::std::sync::Arc<dyn ::datafusion::physical_expr::PhysicalExpr>,
            ) -> ::datafusion::common::Result<
                ::datafusion::common::tree_node::TreeNodeRecursion,
            >,
        ) -> ::datafusion::common::Result<::datafusion::common::tree_node::TreeNodeRecursion> {
            Ok(::datafusion::common::tree_node::TreeNodeRecursion::Continue)
        }

        fn with_new_children(
            self: ::std::sync::Arc<Self>,
            _children: ::std::vec::Vec<
                ::std::sync::Arc<dyn ::datafusion::physical_plan::ExecutionPlan>,
            >,
        ) -> ::datafusion::common::Result<
            ::std::sync::Arc<dyn ::datafusion::physical_plan::ExecutionPlan>,
        > {
            Ok(self)
        }
    };
}
